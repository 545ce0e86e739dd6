// A batch's CUDA events as lateness stamps on the host's clock (collectives/engine/lateness.hpp).
// Pure: the event timer reads the events' times and hands them here, so this needs no GPU.
#pragma once

#include <vector>

#include "collectives/engine/timer.hpp"

namespace cb::cuda {

// `anchor_us` is the host's steady clock when the batch's start event ran (recorded on an idle
// stream); exits_ms[s][i] is the event after call i on stream s and entries_ms[s][i] the one
// before it (NaN where none was recorded: then the previous call's exit, or the start for the
// first call; an entry is never before that), each in ms after the start event. A process with
// several GPUs enters a call when its last GPU does and leaves when its last GPU does.
CallStamps stamps_from_events(double anchor_us, const std::vector<std::vector<double>>& exits_ms,
                              const std::vector<std::vector<double>>& entries_ms);

}  // namespace cb::cuda
