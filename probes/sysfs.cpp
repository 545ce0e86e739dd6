#include "probes/sysfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>

#include "common/error.hpp"

namespace cb {

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

std::string join_path(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// A relative path from directory `from` to `to`, both inside the tree.
std::string relative_path(const std::string& from, const std::string& to) {
  auto a = split_path(from), b = split_path(to);
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  std::vector<std::string> parts(a.size() - common, "..");
  parts.insert(parts.end(), b.begin() + static_cast<std::ptrdiff_t>(common), b.end());
  return parts.empty() ? "." : join_path(parts);
}

void make_dirs(const std::string& path) {
  std::string cur;
  for (const auto& part : split_path(path)) {
    if (!cur.empty() || path[0] == '/') cur += '/';
    cur += part;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      runtime_error("cannot create '{}': {}", cur, std::strerror(errno));
    }
  }
}

}  // namespace

Sysfs::Sysfs(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::optional<std::string> Sysfs::resolve(const std::string& rel) {
  std::deque<std::string> todo;
  for (auto& p : split_path(rel)) todo.push_back(p);
  std::vector<std::string> cur;
  int hops = 0;
  while (!todo.empty()) {
    std::string part = todo.front();
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (!cur.empty()) cur.pop_back();  // never above the root
      continue;
    }
    cur.push_back(part);
    std::string here = join_path(cur);
    std::string full = root_ + "/" + here;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISLNK(st.st_mode)) continue;
    if (++hops > 40) return std::nullopt;
    char buf[4096];
    ssize_t n = ::readlink(full.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return std::nullopt;
    std::string target(buf, static_cast<std::size_t>(n));
    links_[here] = target;
    cur.pop_back();
    if (target[0] == '/') {
      // An absolute link names a path on the live machine; inside a tree it is read from the
      // tree's root (a leading /sys is the root itself).
      cur.clear();
      if (target.rfind("/sys/", 0) == 0) target = target.substr(5);
    }
    auto parts = split_path(target);
    todo.insert(todo.begin(), parts.begin(), parts.end());
  }
  return join_path(cur);
}

std::optional<std::string> Sysfs::read_raw(const std::string& rel) {
  auto canon = resolve(rel);
  if (!canon) return std::nullopt;
  std::string full = root_ + "/" + *canon;
  int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string data;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {  // an attribute whose show() fails, e.g. EINVAL from a down link's speed
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  files_[*canon] = data;
  return data;
}

std::optional<std::string> Sysfs::read(const std::string& rel) {
  auto data = read_raw(rel);
  if (!data) return std::nullopt;
  while (!data->empty() && std::isspace(static_cast<unsigned char>(data->back()))) data->pop_back();
  return data;
}

std::optional<std::string> Sysfs::read_binary(const std::string& rel) {
  return read_raw(rel);
}

std::vector<std::string> Sysfs::list(const std::string& rel) {
  std::vector<std::string> names;
  auto canon = resolve(rel);
  if (!canon) return names;
  std::string dir = root_ + "/" + *canon;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  dirs_.insert(*canon);
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(name);
    std::string child = canon->empty() ? name : *canon + "/" + name;
    struct stat st {};
    std::string full = dir + "/" + name;
    if (::lstat(full.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char buf[4096];
      ssize_t n = ::readlink(full.c_str(), buf, sizeof buf - 1);
      if (n > 0) links_[child] = std::string(buf, static_cast<std::size_t>(n));
    } else if (S_ISDIR(st.st_mode)) {
      dirs_.insert(child);
    }
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Sysfs::link_name(const std::string& rel) {
  auto canon = resolve(rel);
  if (!canon) return std::nullopt;
  dirs_.insert(*canon);  // a capture keeps the target so that the link resolves there too
  auto slash = canon->rfind('/');
  return slash == std::string::npos ? *canon : canon->substr(slash + 1);
}

void Sysfs::capture(const std::string& dir) const {
  make_dirs(dir);
  for (const auto& d : dirs_) {
    if (!d.empty()) make_dirs(dir + "/" + d);
  }
  for (const auto& [path, data] : files_) {
    make_dirs(dir + "/" + parent_of(path));
    std::ofstream out(dir + "/" + path, std::ios::binary | std::ios::trunc);
    out << data;
    if (!out) runtime_error("cannot write '{}/{}': {}", dir, path, std::strerror(errno));
  }
  for (const auto& [path, raw_target] : links_) {
    std::string target = raw_target;
    if (target[0] == '/') {
      // Keep every link relative so the tree can be moved.
      std::string inside = target.rfind("/sys/", 0) == 0 ? target.substr(5) : target.substr(1);
      target = relative_path(parent_of(path), inside);
    }
    make_dirs(dir + "/" + parent_of(path));
    std::string full = dir + "/" + path;
    struct stat st {};
    if (::lstat(full.c_str(), &st) == 0) continue;  // a directory or file already written
    if (::symlink(target.c_str(), full.c_str()) != 0) {
      runtime_error("cannot create symlink '{}': {}", full, std::strerror(errno));
    }
  }
}

}  // namespace cb
