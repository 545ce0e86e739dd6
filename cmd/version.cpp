// `commbench version`: what was built and which libraries this process finds at run time.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>

#include "cmd/subcommands.hpp"
#include "collectives/backends/registry.hpp"
#include "common/version_info.hpp"

namespace cb {

namespace {

int print_version(const std::map<std::string, std::string>& flags) {
  std::cout << fmt::format("commbench {}\n", commbench_version());
  std::cout << fmt::format("git commit: {}\n", commbench_git_commit());
  std::cout << fmt::format("build: {}\n", build_options());
  BackendOptions options;
  options.flags = flags;
  for (const auto& line : backend_version_lines(options)) std::cout << line << "\n";
  return 0;
}

}  // namespace

void register_version(CLI::App& app, Action& action) {
  CLI::App* v = app.add_subcommand("version", "version, build options and libraries found");
  // The flags of the backends that report versions: where their libraries are looked for.
  auto flags = std::make_shared<std::map<std::string, std::string>>();
  for (const auto& e : backend_registry()) {
    if (!e.version_lines) continue;
    for (const auto& f : e.flags) {
      if (f.in_version) v->add_option(f.name, (*flags)[f.name], f.help);
    }
  }
  v->callback([&action, flags] { action = [flags] { return print_version(*flags); }; });
}

}  // namespace cb
