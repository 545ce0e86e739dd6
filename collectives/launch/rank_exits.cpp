#include "collectives/launch/rank_exits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "common/error.hpp"

namespace cb {

namespace {

// Lower is more telling.
int severity(const RankExit& e) {
  if (e.unreported) return 0;
  if (e.signaled) return e.stopped_by_launcher ? 90 : 0;
  switch (e.code) {
    case kExitOk:
      return 100;
    case kExitTimeout:
      return 2;
    case kExitValidation:
      return 3;
    case kExitUsage:
      return 4;
    case kExitRegression:
      return 5;
    case kExitRuntime:
      return 6;
    default:
      return 1;
  }
}

}  // namespace

std::string describe(const RankExit& e) {
  const std::string who = e.host.empty() ? fmt::format("rank {}", e.rank)
                                         : fmt::format("rank {} on host {}", e.rank, e.host);
  if (e.unreported) {
    return who +
           " ended without a word: killed by a signal it could not catch, or its host went down";
  }
  if (e.signaled) {
    const char* what = ::strsignal(e.code);
    if (e.tied_with >= 0) {
      return fmt::format(
          "rank {} or rank {} was killed by signal {} ({}) first: both ended within 1 ms, too "
          "close "
          "to tell which",
          std::min(e.rank, e.tied_with), std::max(e.rank, e.tied_with), e.code,
          what ? what : "unknown");
    }
    return fmt::format("{} was killed by signal {} ({})", who, e.code, what ? what : "unknown");
  }
  return fmt::format("{} exited with code {}", who, e.code);
}

RunVerdict judge(const std::vector<RankExit>& exits) {
  const RankExit* worst = nullptr;
  for (const auto& e : exits) {
    if (!worst || severity(e) < severity(*worst)) worst = &e;
  }
  if (!worst || severity(*worst) == 100) return {kExitOk, ""};
  const bool own_code =
      !worst->signaled && worst->code >= kExitUsage && worst->code <= kExitRegression;
  if (!worst->message.empty()) return {own_code ? worst->code : kExitRuntime, worst->message};
  if (own_code) return {worst->code, ""};
  return {kExitRuntime, describe(*worst)};
}

}  // namespace cb
