// Paths of the crafted result, topology and spec fixtures the report-tool tests read.
#pragma once

#include <string>

namespace cb::test {

inline std::string result_fixture(const std::string& name) {
  return std::string(CB_TEST_DATA) + "/results/" + name;
}

inline std::string example_spec(const std::string& name) {
  return std::string(CB_SOURCE_DIR) + "/examples/specs/" + name;
}

}  // namespace cb::test
