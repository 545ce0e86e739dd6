// Validating one collective call exactly: every output element poisoned, each rank's input laid
// down from the pattern (collectives/validation/pattern.hpp), the call run by every rank
// together, then every rank's result checked against what it must hold. The runner validates a
// case's call this way, and replay each collective of its step.
#pragma once

#include <cstdint>
#include <functional>

#include "collectives/backend.hpp"
#include "core/control.hpp"

namespace cb {

// Lays down `rank`'s input of `call` (its send buffer, or its block of the buffer in place;
// alltoallv: the blocks it sends, packed from the buffer's start) in `memory` from `pattern`.
void fill_call_input(Memory& memory, const CollectiveCall& call, Pattern& pattern, int rank,
                     int nranks);

// Validates `call` on `comm` with the pattern of `seed`: poisons each local rank's result region
// and fills its input, waits for every rank (control barrier), runs `run` (which must issue the
// call and wait for it), then counts wrong elements over every rank (collective over `control`).
std::uint64_t validate_call(Memory& memory, Control& control, Communicator& comm,
                            const CollectiveCall& call, std::uint64_t seed,
                            const std::function<void()>& run);

}  // namespace cb
