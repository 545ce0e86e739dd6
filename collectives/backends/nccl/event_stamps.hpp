// A batch's CUDA events as lateness stamps on the host's clock (collectives/engine/lateness.hpp).
// Pure: the event timer reads the events' times and hands them here, so this needs no GPU.
#pragma once

#include <vector>

#include "core/timer.hpp"

namespace cb::cuda {

// `anchor_us` is the host's steady clock when the batch's start event ran (recorded on an idle
// stream); exits_ms[s][i] is the event after call i on stream s, in ms after the start event. A
// call's kernel starts when the stream reaches it: at the previous call's end (the start for the
// first), or later where the host enqueued it later, at host_entries_us[i] (the host's clock just
// before it issued the call; NaN where not read). A process with several GPUs enters and leaves a
// call with its last GPU.
CallStamps stamps_from_events(double anchor_us, const std::vector<std::vector<double>>& exits_ms,
                              const std::vector<double>& host_entries_us);

}  // namespace cb::cuda
