#include "collectives/fault_injection.hpp"

#include <cstdlib>
#include <string>
#include <string_view>

namespace cb {

const TestFault& test_fault() {
  static const TestFault fault = [] {
    TestFault f;
    const char* env = std::getenv("COMMBENCH_TEST_FAULT");
    if (!env) return f;
    std::string_view text(env);
    auto colon = text.find(':');
    if (colon == std::string_view::npos) return f;
    std::string_view kind = text.substr(0, colon);
    int rank = std::atoi(std::string(text.substr(colon + 1)).c_str());
    if (kind == "hang") f.hang_rank = rank;
    if (kind == "corrupt") f.corrupt_rank = rank;
    if (kind == "die") f.die_rank = rank;
    return f;
  }();
  return fault;
}

}  // namespace cb
