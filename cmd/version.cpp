// `commbench version`: what was built and which libraries this process finds at run time.
#include <fmt/format.h>

#include <iostream>

#include "cmd/subcommands.hpp"
#include "cmd/version_info.hpp"
#include "collectives/mpi/mpi_runtime.hpp"

namespace cb {

namespace {

int print_version() {
  std::cout << fmt::format("commbench {}\n", commbench_version());
  std::cout << fmt::format("git commit: {}\n", commbench_git_commit());
  std::cout << fmt::format("build: {}\n", build_options());
  // MPI_Get_library_version may be called before MPI_Init.
  std::cout << fmt::format("MPI: {} ({})\n", mpi::library_version(), mpi::library_version_full());
  return 0;
}

}  // namespace

void register_version(CLI::App& app, Action& action) {
  CLI::App* v = app.add_subcommand("version", "version, build options and libraries found");
  v->callback([&action] { action = print_version; });
}

}  // namespace cb
