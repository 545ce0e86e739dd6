// `commbench version`: what was built and which libraries this process finds at run time.
#include <fmt/format.h>

#include <iostream>

#include "cmd/subcommands.hpp"
#include "cmd/version_info.hpp"
#include "collectives/registry.hpp"

namespace cb {

namespace {

int print_version(const std::string& nccl_library) {
  std::cout << fmt::format("commbench {}\n", commbench_version());
  std::cout << fmt::format("git commit: {}\n", commbench_git_commit());
  std::cout << fmt::format("build: {}\n", build_options());
  BackendOptions options;
  options.nccl_library = nccl_library;
  for (const auto& line : backend_version_lines(options)) std::cout << line << "\n";
  return 0;
}

}  // namespace

void register_version(CLI::App& app, Action& action) {
  CLI::App* v = app.add_subcommand("version", "version, build options and libraries found");
  auto nccl_lib = std::make_shared<std::string>();
  v->add_option("--nccl-lib", *nccl_lib, "libnccl to report (default: the run's search order)");
  v->callback([&action, nccl_lib] { action = [nccl_lib] { return print_version(*nccl_lib); }; });
}

}  // namespace cb
