// The run's control channel between ranks, apart from the communicators being measured.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cb {

// The run's control channel between ranks, separate from any communicator being measured: it
// agrees on iteration counts, combines timings and gathers results at rank 0.
class Control {
 public:
  virtual ~Control() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void barrier() = 0;
  // A barrier that sleeps while it waits, for ranks that sit out while others are measured (a
  // polling barrier takes a whole core each).
  virtual void quiet_barrier() { barrier(); }
  virtual void max(double* values, std::size_t n) = 0;         // element-wise, result on all ranks
  virtual void sum(std::uint64_t* values, std::size_t n) = 0;  // element-wise, result on all ranks
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  // Point to point, for probes that time one pair of ranks at a time: `count` messages of
  // `bytes` each, all in flight at once, to or from `peer`; returns when all have completed.
  virtual void send(int peer, const void* data, std::size_t bytes, int count = 1) = 0;
  virtual void recv(int peer, void* data, std::size_t bytes, int count = 1) = 0;
};

}  // namespace cb
