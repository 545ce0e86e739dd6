#include "app/version.hpp"

#include <fmt/format.h>

#include <iostream>

#include "collectives/backends/registry.hpp"
#include "common/version_info.hpp"

namespace cb {

const Flags<VersionRequest>& version_flags() {
  // The flags of the backends that report versions: where their libraries are looked for.
  static const Flags<VersionRequest> flags = [] {
    Flags<VersionRequest> f;
    for (const auto& e : backend_registry()) {
      if (!e.version_lines) continue;
      for (const auto& b : e.flags) {
        if (!b.in_version) continue;
        Flag<VersionRequest> row;
        row.names = b.name;
        row.help = b.help;
        row.text = [name = b.name](VersionRequest& rq) -> std::string& {
          return rq.backend_flags[name];
        };
        f.push_back(std::move(row));
      }
    }
    return f;
  }();
  return flags;
}

int version(const VersionRequest& rq) {
  std::cout << fmt::format("commbench {}\n", commbench_version());
  std::cout << fmt::format("git commit: {}\n", commbench_git_commit());
  std::cout << fmt::format("build: {}\n", build_options());
  BackendOptions options;
  options.flags = rq.backend_flags;
  for (const auto& line : backend_version_lines(options)) std::cout << line << "\n";
  return 0;
}

}  // namespace cb
