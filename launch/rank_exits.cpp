#include "launch/rank_exits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

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
  if (e.code == kExitTimeout) {
    return who + " timed out: it made no progress within --timeout (its watchdog ended it, exit 4)";
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
  if (!worst->message.empty()) return {own_code ? worst->code : kExitRuntime, worst->message, true};
  if (own_code) return {worst->code, "", true};
  RunVerdict v{kExitRuntime, describe(*worst)};
  v.killed =
      worst->unreported || (worst->signaled && !worst->stopped_by_launcher && !worst->guessed);
  return v;
}

RunVerdict with_launcher_words(RunVerdict v, const std::string& launcher, const std::string& said) {
  if (v.exit_code == kExitOk || v.rank_said || v.killed || said.empty()) return v;
  const std::string name = launcher.substr(launcher.find_last_of('/') + 1);
  v.message = v.message.empty() ? fmt::format("{} reported: {}", name, said)
                                : fmt::format("{} reported: {}; {}", name, said, v.message);
  return v;
}

RunVerdict name_stopped_rank(RunVerdict v, const std::vector<RankExit>& exits,
                             const std::map<int, double>& stopped,
                             const std::map<int, std::string>& hosts) {
  if (v.exit_code == kExitOk || stopped.empty()) return v;
  const auto& [rank, seconds] = *stopped.begin();
  std::string who = fmt::format("rank {}", rank);
  std::set<std::string> distinct;
  for (const auto& [r, h] : hosts) distinct.insert(h);
  if (auto h = hosts.find(rank); h != hosts.end() && distinct.size() > 1) {
    who += " on host " + h->second;
  }
  const std::string stop = fmt::format(
      "{} was stopped (SIGSTOP or a debugger) for {:.1f} s and made no progress", who, seconds);
  // The timeout a peer hit, without the peer's own rank: it only waited.
  std::string timeout;
  for (const auto& e : exits) {
    const auto end = e.message.find(" (--timeout)");
    if (!e.signaled && e.code == kExitTimeout && end != std::string::npos) {
      timeout = e.message.substr(0, end + 12);
      break;
    }
  }
  bool timed_out = !timeout.empty() || v.exit_code == kExitTimeout;
  for (const auto& e : exits) timed_out = timed_out || (!e.signaled && e.code == kExitTimeout);
  if (!timeout.empty()) {
    v.message = timeout + ": " + stop;
  } else if (timed_out || v.message.empty()) {
    v.message = (timed_out ? "timeout: " : "") + stop;
  } else {
    v.message = stop + "; " + v.message;
  }
  if (timed_out) v.exit_code = kExitTimeout;
  v.rank_said = true;
  return v;
}

int launcher_job_exit_code(int launcher_code, bool rank_reported) {
  if (launcher_code == kExitOk) return kExitOk;
  const bool own = launcher_code >= kExitUsage && launcher_code <= kExitRegression;
  return own && rank_reported ? launcher_code : kExitRuntime;
}

}  // namespace cb
