#include "common/file_identity.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <tuple>

#include "common/error.hpp"

namespace cb {

namespace {

namespace fs = std::filesystem;

// What a path is on disk: the file's device and inode, or, for a file not there yet, its
// directory's device and inode and its name there.
using Identity = std::tuple<dev_t, ino_t, std::string>;

std::optional<Identity> identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return Identity{st.st_dev, st.st_ino, ""};
  // Not there (or a dangling link, written through to where it points): its directory's entry.
  fs::path target(path);
  std::error_code ec;
  for (int hop = 0; hop < 40 && fs::is_symlink(fs::symlink_status(target, ec)); ++hop) {
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;  // the writer's check names it
  return Identity{st.st_dev, st.st_ino, target.filename().string()};
}

}  // namespace

void check_distinct_files(const std::vector<NamedFile>& outputs,
                          const std::vector<NamedFile>& inputs) {
  std::vector<std::pair<Identity, const NamedFile*>> seen;
  for (const auto& in : inputs) {
    struct stat st {};
    if (::stat(in.path.c_str(), &st) == 0) seen.push_back({{st.st_dev, st.st_ino, ""}, &in});
  }
  for (const auto& out : outputs) {
    if (out.path.empty()) continue;  // not given
    const std::optional<Identity> id = identity_of(out.path);
    if (!id) continue;
    for (const auto& [other, named] : seen) {
      if (other == *id) {
        usage_error("{} '{}' names the same file as {} '{}'", out.option, out.path, named->option,
                    named->path);
      }
    }
    seen.push_back({*id, &out});
  }
}

void check_distinct_outputs(const std::vector<std::string>& paths,
                            const std::vector<NamedFile>& inputs) {
  std::vector<NamedFile> outputs;
  for (const auto& p : paths) outputs.push_back({"--output", p});
  check_distinct_files(outputs, inputs);
}

}  // namespace cb
