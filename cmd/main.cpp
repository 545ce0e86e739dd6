// commbench: one binary, many subcommands. Errors become one line on stderr and an exit code.
#include <cstdio>
#include <string>

#include "cmd/options.hpp"
#include "cmd/subcommands.hpp"
#include "collectives/launch.hpp"
#include "common/error.hpp"

namespace {

// Usage and validation errors are the same on every rank; only the first rank reports them.
bool reporting_rank(cb::ErrorKind kind) {
  if (kind != cb::ErrorKind::Usage && kind != cb::ErrorKind::Validation) return true;
  return cb::detect_launch().rank == 0;
}

std::string one_line(std::string s) {
  for (auto& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  cb::set_invocation(cb::command_line(argc, argv));
  CLI::App app{"commbench: measure how fast a cluster moves data between ranks, and why"};
  app.require_subcommand(1);
  cb::Action action;
  cb::register_run(app, action);
  cb::register_tune(app, action);
  cb::register_list(app, action);
  cb::register_version(app, action);
  cb::register_topo(app, action);
  cb::register_probe(app, action);
  cb::register_compare(app, action);
  cb::register_check(app, action);
  cb::register_plot(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (reporting_rank(cb::ErrorKind::Usage)) {
      std::fprintf(stderr, "commbench: %s (see commbench --help)\n", one_line(e.what()).c_str());
    }
    return cb::kExitUsage;
  } catch (const cb::Error& e) {
    if (reporting_rank(e.kind()))
      std::fprintf(stderr, "commbench: %s\n", one_line(e.what()).c_str());
    return cb::exit_code(e.kind());
  }
  try {
    return action ? action() : 0;
  } catch (const cb::Error& e) {
    if (reporting_rank(e.kind()))
      std::fprintf(stderr, "commbench: %s\n", one_line(e.what()).c_str());
    return cb::exit_code(e.kind());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "commbench: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "commbench: error: %s\n", one_line(e.what()).c_str());
    return 1;
  }
}
