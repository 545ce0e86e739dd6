// Paths of the crafted result, topology and spec fixtures the report-tool tests read.
#pragma once

#include <cstdint>
#include <string>

#include "common/record.hpp"

namespace cb::test {

inline std::string result_fixture(const std::string& name) {
  return std::string(CB_TEST_DATA) + "/results/" + name;
}

inline std::string example_spec(const std::string& name) {
  return std::string(CB_SOURCE_DIR) + "/examples/specs/" + name;
}

// A 2-rank, 1-node float sum allreduce of `bytes` on MPI's default algorithm, figures unset.
inline ResultRecord mpi_allreduce_record(std::uint64_t bytes) {
  ResultRecord r;
  r.backend = "mpi";
  r.algorithm = "default";
  r.collective = "allreduce";
  r.dtype = "float";
  r.op = "sum";
  r.placement = "out";
  r.nranks = 2;
  r.nnodes = 1;
  r.bytes = bytes;
  r.count = bytes / 4;
  return r;
}

}  // namespace cb::test
