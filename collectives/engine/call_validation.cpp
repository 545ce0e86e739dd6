#include "collectives/engine/call_validation.hpp"

#include <algorithm>

#include "collectives/engine/fault_injection.hpp"

namespace cb {

namespace {

std::byte* at(void* base, std::uint64_t elements, DType t) {
  return static_cast<std::byte*>(base) + elements * info(t).size;
}

// The elements of a call's output region that its result must overwrite: `region`, or for
// alltoallv what this rank receives (in place: and what it sends from the same buffer).
std::uint64_t poisoned_elements(const CollectiveCall& local, std::uint64_t region) {
  if (!local.blocks) return region;
  const RankBlocks& b = local.blocks->local[local.local];
  return local.placement == Placement::Out ? b.recv_total : std::max(b.recv_total, b.send_total);
}

// The segment the test-only corrupt fault hits: the one from source rank corrupt_source where it
// names one, else the first; null where there is none.
const Segment* corrupted_segment(const std::vector<Segment>& segments) {
  for (const auto& s : segments) {
    if (test_fault().corrupt_source < 0 || s.source == test_fault().corrupt_source) return &s;
  }
  return nullptr;
}

}  // namespace

void fill_call_input(Memory& memory, const CollectiveCall& call, Pattern& pattern, int rank,
                     int nranks) {
  const auto& ci = info(call.collective);
  PeriodicTable table = pattern.input_table(rank);
  if (call.blocks) {  // alltoallv: the blocks this rank sends, packed from the buffer's start
    const std::uint64_t sent = call.blocks->local[call.local].send_total;
    memory.fill(call.placement == Placement::Out ? call.send : call.recv, sent, table, 0);
    return;
  }
  if (call.placement == Placement::Out) {
    memory.fill(call.send, elements(ci.send, call.count, nranks), table, 0);
  } else {
    std::uint64_t offset = in_place_input_offset(call.collective, rank, call.count);
    memory.fill(at(call.recv, offset, call.dtype), elements(ci.send, call.count, nranks), table, 0);
  }
}

std::uint64_t validate_call(Memory& memory, Control& control, Communicator& comm,
                            const CollectiveCall& call, std::uint64_t seed,
                            const std::function<void()>& run) {
  const int n = comm.size();
  const int rank = comm.rank();
  const auto& ci = info(call.collective);
  Pattern pattern(call.dtype, call.op == ReduceOp::None ? ReduceOp::Max : call.op, n, seed);
  // Poison what the call must overwrite, then lay down this iteration's input.
  const std::uint64_t region = call.placement == Placement::Out
                                   ? elements(ci.recv, call.count, n)
                                   : in_place_elements(call.collective, call.count, n);
  // Each rank this process drives (several GPUs per process) has its own buffers and input.
  for (int l = 0; l < comm.local_ranks(); ++l) {
    CollectiveCall local = comm.local_call(call, l);
    memory.poison(local.recv, poisoned_elements(local, region) * info(call.dtype).size);
    fill_call_input(memory, local, pattern, rank + l, n);
  }
  control.barrier();
  run();

  std::uint64_t wrong = 0;
  for (int l = 0; l < comm.local_ranks(); ++l) {
    CollectiveCall local = comm.local_call(call, l);
    void* result = local.recv;
    if (call.placement == Placement::In) {
      result = at(local.recv, comm.in_place_output_offset(call.collective, rank + l, call.count),
                  call.dtype);
    }
    std::vector<Segment> segments = comm.expected(local);
    if (rank + l == test_fault().corrupt_rank) {
      if (const Segment* s = corrupted_segment(segments)) {
        memory.corrupt(at(result, s->dst_offset, call.dtype), info(call.dtype).size);
      }
    }
    for (const auto& s : segments) {
      wrong += memory.count_wrong(at(result, s.dst_offset, call.dtype), s.length,
                                  pattern.table_for(s), s.src_offset);
    }
  }
  control.sum(&wrong, 1);
  return wrong;
}

}  // namespace cb
