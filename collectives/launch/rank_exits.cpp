#include "collectives/launch/rank_exits.hpp"

#include <fmt/format.h>

#include <cstring>

namespace cb {

namespace {

// Lower is more telling.
int severity(const RankExit& e) {
  if (e.signaled) return e.stopped_by_launcher ? 90 : 0;
  switch (e.code) {
    case 0:
      return 100;
    case 4:
      return 2;
    case 3:
      return 3;
    case 2:
      return 4;
    case 5:
      return 5;
    case 1:
      return 6;
    default:
      return 1;
  }
}

}  // namespace

std::string describe(const RankExit& e) {
  if (e.signaled) {
    const char* what = ::strsignal(e.code);
    return fmt::format("rank {} was killed by signal {} ({})", e.rank, e.code,
                       what ? what : "unknown");
  }
  return fmt::format("rank {} exited with code {}", e.rank, e.code);
}

RunVerdict judge(const std::vector<RankExit>& exits) {
  const RankExit* worst = nullptr;
  for (const auto& e : exits) {
    if (!worst || severity(e) < severity(*worst)) worst = &e;
  }
  if (!worst || severity(*worst) == 100) return {0, ""};
  if (!worst->signaled && worst->code >= 2 && worst->code <= 5) return {worst->code, ""};
  return {1, describe(*worst)};
}

}  // namespace cb
