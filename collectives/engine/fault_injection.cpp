#include "collectives/engine/fault_injection.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cb {

namespace {

void add_fault(TestFault& f, std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return;
  std::string_view kind = text.substr(0, colon);
  std::string rest(text.substr(colon + 1));
  int rank = std::atoi(rest.c_str());
  if (kind == "hang") f.hang_rank = rank;
  if (kind == "link") f.link_us_per_mib = std::strtod(rest.c_str(), nullptr);
  if (kind == "corrupt") f.corrupt_rank = rank;
  if (auto second = rest.find(':'); kind == "corrupt" && second != std::string::npos) {
    f.corrupt_source = std::atoi(rest.c_str() + second + 1);
  }
  if (kind == "die") f.die_rank = rank;
  if (auto second = rest.find(':'); kind == "faults" && second != std::string::npos) {
    f.faults_rank = rank;
    f.faults_bytes = std::strtoull(rest.c_str() + second + 1, nullptr, 10);
    if (auto third = rest.find(':', second + 1); third != std::string::npos) {
      f.faults_calls = std::strtoull(rest.c_str() + third + 1, nullptr, 10);
    }
  }
  if (auto second = rest.find(':'); kind == "stall" && second != std::string::npos) {
    if (auto third = rest.find(':', second + 1); third != std::string::npos) {
      f.stall_rank = rank;
      f.stall_us = std::atoi(rest.c_str() + second + 1);
      f.stall_every = std::strtoull(rest.c_str() + third + 1, nullptr, 10);
    }
  }
  if (auto second = rest.find(':'); kind == "die" && second != std::string::npos) {
    f.die_after_cases = std::strtoull(rest.c_str() + second + 1, nullptr, 10);
  }
  if (auto second = rest.find(':'); kind == "skew" && second != std::string::npos) {
    f.skew_rank = rank;
    f.skew_us = std::strtod(rest.c_str() + second + 1, nullptr);
  }
  if (auto second = rest.find(':'); kind == "slow" && second != std::string::npos) {
    f.slow_ranks.push_back(rank);
    f.slow_us = std::atoi(rest.c_str() + second + 1);
    if (auto third = rest.find(':', second + 1); third != std::string::npos) {
      std::string scope = rest.substr(third + 1);
      auto fourth = scope.find(':');
      f.slow_collective = scope.substr(0, fourth);
      if (fourth != std::string::npos) {
        f.slow_min_bytes = std::strtoull(scope.c_str() + fourth + 1, nullptr, 10);
      }
    }
  }
}

}  // namespace

const TestFault& test_fault() {
  static const TestFault fault = [] {
    TestFault f;
    const char* env = std::getenv("COMMBENCH_TEST_FAULT");
    if (!env) return f;
    std::string_view all(env);
    for (std::size_t at = 0; at <= all.size();) {
      const std::size_t comma = std::min(all.find(',', at), all.size());
      add_fault(f, all.substr(at, comma - at));
      at = comma + 1;
    }
    return f;
  }();
  return fault;
}

}  // namespace cb
