// commbench: one binary, many subcommands. Errors become one line on stderr and an exit code.
#include <cstdio>
#include <string>
#include <vector>

#include "cmd/empty_values.hpp"
#include "cmd/subcommands.hpp"
#include "collectives/catalogue/names.hpp"
#include "common/checked_write.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/version_info.hpp"
#include "core/process_start.hpp"
#include "launch/env_rendezvous.hpp"
#include "launch/peer_loss.hpp"
#include "launch/rank_status.hpp"

namespace {

// Usage and validation errors are the same on every rank; only the first rank reports them,
// except under env:// launchers, whose ranks' logs are often read one at a time (a pod's).
bool reporting_rank(cb::ErrorKind kind) {
  if (kind != cb::ErrorKind::Usage && kind != cb::ErrorKind::Validation) return true;
  const cb::LaunchInfo launch = cb::detect_launch();
  return launch.rank == 0 || launch.kind == cb::LaunchInfo::Kind::Env;
}

// Whether this process is one of a launch's ranks: the subcommands that meet their peers (an
// env:// one tells rank 0 of a failure before they meet).
bool g_meets_ranks = false;

bool meets_ranks(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string sub = argv[1];
  if (sub == "run" || sub == "tune" || sub == "replay" || sub == "topo") return true;
  return sub == "probe" && argc > 2 && std::string(argv[2]) == "links";
}

// A failure's one line: printed here, or, for a rank whose commbench parent sees every rank,
// handed to the parent, which prints the line that names the first cause.
int failed(int code, const std::string& text, bool report) {
  // A refusal may quote the command line: a secret's value never reaches stderr.
  const std::string message = cb::redact_secret_values(text);
  // A peer that ended, where this process watches its peers itself (env://), is the cause.
  const bool consequence = code == cb::kExitRuntime || code == cb::kExitTimeout;
  if (std::string cause = cb::failure_cause(consequence ? std::chrono::milliseconds(3000)
                                                        : std::chrono::milliseconds(0));
      consequence && !cause.empty()) {
    std::fprintf(stderr, "commbench: %s\n", cause.c_str());
    return cb::kExitRuntime;
  }
  if (cb::rank_status_wanted()) {
    cb::record_rank_exit(code, message);  // the parent says it once
  } else if (report) {
    std::fprintf(stderr, "commbench: %s\n", message.c_str());
    std::fflush(stderr);
  }
  // An env:// rank that fails before it meets rank 0 tells it, so that every rank ends now.
  if (g_meets_ranks) cb::tell_rendezvous_of_failure(code, message);
  return code;
}

// Help and --version print to stdout too; a failed write there is reported like any other.
int printed(int code) {
  try {
    cb::flush_stdout();
  } catch (const cb::Error& e) {
    std::fprintf(stderr, "commbench: %s\n", e.what());
    return cb::kExitRuntime;
  }
  return code;
}

// CLI11 answers an unknown first word with "A subcommand is required": name the word instead.
void check_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(argv[1])) return;
    names.push_back(sub->get_name());
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  cb::usage_error("unknown subcommand '{}': expected one of {}", argv[1], list);
}

void register_subcommands(CLI::App& app, cb::Action& action) {
  cb::register_run(app, action);
  cb::register_tune(app, action);
  cb::register_replay(app, action);
  cb::register_list(app, action);
  cb::register_version(app, action);
  cb::register_topo(app, action);
  cb::register_probe(app, action);
  cb::register_compare(app, action);
  cb::register_check(app, action);
  cb::register_plot(app, action);
}

int finished(int code) {
  if (cb::rank_status_wanted()) cb::record_rank_exit(code, "");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  cb::set_invocation(cb::command_line(argc, argv));
  g_meets_ranks = meets_ranks(argc, argv);
  CLI::App app{"commbench: measure how fast a cluster moves data between ranks, and why"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", [] { return "commbench " + cb::commbench_version(); },
      "print the version line (`commbench version` says more)");
  cb::Action action;
  register_subcommands(app, action);
  try {
    check_subcommand(app, argc, argv);
    app.parse(argc, argv);
    cb::refuse_empty_values(app);
  } catch (const CLI::CallForHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return printed(app.exit(e));
  } catch (const CLI::ParseError& e) {
    return failed(cb::kExitUsage, cb::one_line(e.what()) + " (see commbench --help)",
                  reporting_rank(cb::ErrorKind::Usage));
  } catch (const cb::Error& e) {
    return failed(cb::exit_code(e.kind()), cb::one_line(e.what()), reporting_rank(e.kind()));
  }
  try {
    int code = action ? action() : 0;
    cb::flush_stdout();  // output lost on the way (a full disk, /dev/full) is a failure
    return finished(code);
  } catch (const cb::Error& e) {
    return failed(cb::exit_code(e.kind()), cb::one_line(e.what()), reporting_rank(e.kind()));
  } catch (const std::bad_alloc&) {
    return failed(cb::kExitRuntime, "out of memory", true);
  } catch (const std::exception& e) {
    return failed(cb::kExitRuntime, "error: " + cb::one_line(e.what()), true);
  }
}
