// Test-only fault injection, documented in the README: COMMBENCH_TEST_FAULT=KIND:R makes rank R
// hang inside the timed loop (hang), corrupt one element of its validated result (corrupt; with
// corrupt:R:S the first element of the block it received from rank S), or
// kill itself with SIGKILL inside the timed loop as a crashed rank would (die; die:R:N after
// the first N cases it measured finished), or sleep US
// microseconds after every call it issues in the timed loop (slow:R:US, a setting known to be
// slower for tests of advice; slow:R:US:COLLECTIVE:MIN_BYTES only for that collective where a
// rank's buffer holds at least MIN_BYTES, for tests of compare), or map, write and unmap BYTES
// of fresh memory after every call it issues in the timed loop (faults:R:BYTES, as an allocator
// that maps a library's temporary buffers afresh on each call), or after a case's first N calls
// only, warm-up included (faults:R:BYTES:N, as a library that grows its pools at first), or
// sleep US microseconds after every EVERY-th call it issues, warm-up included (stall:R:US:EVERY,
// as a library whose flow control stops back-to-back calls at a steady rhythm), or make
// every rank sleep after each timed alltoallv call for what it received at US microseconds per
// MiB (link:US, a receive link of fixed bandwidth: time then follows the busiest receiver, as on
// a network), or read its clock US microseconds ahead (skew:R:US, negative behind: a host whose
// clock is off, so that lateness must estimate it). Several faults are separated by commas
// (slow:2:3000,slow:3:3000 slows two ranks). Read once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cb {

struct TestFault {
  int hang_rank = -1;
  int corrupt_rank = -1;
  int corrupt_source = -1;  // the block from this rank (-1: the first block of the result)
  int die_rank = -1;
  std::uint64_t die_after_cases = 0;  // the cases rank die_rank finishes first
  std::vector<int> slow_ranks;
  int slow_us = 0;
  std::string slow_collective;       // empty: every collective
  std::uint64_t slow_min_bytes = 0;  // count x element size of the call
  int faults_rank = -1;
  std::size_t faults_bytes = 0;
  std::uint64_t faults_calls = 0;  // faults:R:BYTES:N: a case's first N calls only; 0: every call
  int stall_rank = -1;
  int stall_us = 0;
  std::uint64_t stall_every = 0;
  double link_us_per_mib = 0;      // every rank, alltoallv only
  int skew_rank = -1;
  double skew_us = 0;
};

const TestFault& test_fault();

}  // namespace cb
