// AtomicFile on this machine's file system: an unnamed file (O_TMPFILE) until commit, and the
// named fallback where unnamed files are refused (injected with COMMBENCH_TEST_NO_TMPFILE, as
// no writable file system without them can be mounted here). Deaths are real: a forked child
// killed with SIGKILL part way.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/temp_files.hpp"
#include "temp_dir.hpp"

namespace cb {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The files this process holds open under `dir`, as /proc/self/fd shows them ("(deleted)" for an
// unnamed one).
std::vector<std::string> open_files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string to = fs::read_symlink(e.path(), ec).string();
    if (!ec && to.rfind(dir + "/", 0) == 0) out.push_back(to);
  }
  return out;
}

// The fallback for one test: unnamed files refused as by a file system without them.
class NamedFallback {
 public:
  NamedFallback() { ::setenv("COMMBENCH_TEST_NO_TMPFILE", "1", 1); }
  ~NamedFallback() { ::unsetenv("COMMBENCH_TEST_NO_TMPFILE"); }
  NamedFallback(const NamedFallback&) = delete;
  NamedFallback& operator=(const NamedFallback&) = delete;
};

// Skips where this machine's file system has no unnamed files (then only the fallback runs).
#define REQUIRE_UNNAMED(dir)                                                   \
  do {                                                                         \
    int fd = ::open((dir).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);    \
    if (fd < 0) GTEST_SKIP() << "no O_TMPFILE here: " << std::strerror(errno); \
    ::close(fd);                                                               \
  } while (0)

// Forks a child that opens `path` through AtomicFile, writes, and waits to be killed; returns
// once it has written (the parent then kills it with SIGKILL and reaps it).
void kill_a_writer_part_way(const std::string& path) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(ready[0]);
    AtomicFile file(path);
    file.stream() << "half";
    ssize_t ignored = ::write(ready[1], "x", 1);
    (void)ignored;
    while (true) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(AtomicFile, HasNoNameUntilCommitted) {
  TempDir dir;
  REQUIRE_UNNAMED(dir.path());
  const std::string path = dir / "r.json";
  AtomicFile file(path);
  EXPECT_TRUE(file.unnamed());
  file.stream() << "{}\n";
  EXPECT_TRUE(names_in(dir.path()).empty()) << names_in(dir.path())[0];
  const std::vector<std::string> open = open_files_in(dir.path());
  ASSERT_EQ(open.size(), 1u);
  EXPECT_NE(open[0].find("(deleted)"), std::string::npos) << open[0];
  file.commit();
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"r.json"});
  EXPECT_EQ(read(path), "{}\n");
  EXPECT_TRUE(open_files_in(dir.path()).empty());
}

TEST(AtomicFile, AWriterKilledPartWayLeavesNothing) {
  TempDir dir;
  REQUIRE_UNNAMED(dir.path());
  std::ofstream(dir / "r.csv") << "earlier\n";
  kill_a_writer_part_way(dir / "r.csv");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"r.csv"});
  EXPECT_EQ(read(dir / "r.csv"), "earlier\n");
}

TEST(AtomicFile, ReplacesAnExistingFileWhole) {
  TempDir dir;
  const std::string path = dir / "r.md";
  std::ofstream(path) << "old\n";
  std::ifstream reader(path);  // opened before: keeps reading the old file
  {
    AtomicFile file(path);
    file.stream() << "new\n";
    EXPECT_EQ(read(path), "old\n");
    file.commit();
  }
  EXPECT_EQ(read(path), "new\n");
  std::string line;
  std::getline(reader, line);
  EXPECT_EQ(line, "old");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"r.md"});
}

TEST(AtomicFile, DestroyedUncommittedLeavesNothing) {
  TempDir dir;
  for (bool fallback : {false, true}) {
    std::optional<NamedFallback> named;
    if (fallback) named.emplace();
    {
      AtomicFile file(dir / "r.json");
      file.stream() << "lost";
    }
    EXPECT_TRUE(names_in(dir.path()).empty()) << (fallback ? "fallback" : "unnamed");
  }
}

TEST(AtomicFile, TheSameModeAsANamedFile) {
  TempDir dir;
  REQUIRE_UNNAMED(dir.path());
  const mode_t old = ::umask(027);
  write_file_atomically(dir / "unnamed", "x");
  {
    NamedFallback named;
    write_file_atomically(dir / "named", "x");
  }
  ::umask(old);
  struct stat a {
  }, b{};
  ASSERT_EQ(::stat((dir / "unnamed").c_str(), &a), 0);
  ASSERT_EQ(::stat((dir / "named").c_str(), &b), 0);
  EXPECT_EQ(a.st_mode & 07777, 0640u);
  EXPECT_EQ(b.st_mode & 07777, 0640u);
}

TEST(AtomicFile, WritesThroughASymbolicLinkInBothWays) {
  TempDir dir;
  for (bool fallback : {false, true}) {
    std::optional<NamedFallback> named;
    if (fallback) named.emplace();
    fs::create_directory(dir / "real");
    std::ofstream(dir / "real/t.csv") << "old\n";
    fs::create_symlink("real/t.csv", dir / "l.csv");
    write_file_atomically(dir / "l.csv", "new\n");
    EXPECT_TRUE(fs::is_symlink(dir / "l.csv"));
    EXPECT_EQ(read(dir / "real/t.csv"), "new\n");
    EXPECT_EQ(names_in(dir / "real"), std::vector<std::string>{"t.csv"});
    fs::remove_all(dir / "real");
    fs::remove(dir / "l.csv");
  }
}

TEST(AtomicFile, AStaleTemporaryNameOfThisTagIsReplaced) {
  TempDir dir;
  for (bool fallback : {false, true}) {
    std::optional<NamedFallback> named;
    if (fallback) named.emplace();
    const std::string path = dir / "r.json";
    std::ofstream(path + temp_suffix()) << "stale";
    write_file_atomically(path, "fresh\n");
    EXPECT_EQ(read(path), "fresh\n");
    EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"r.json"});
    fs::remove(path);
  }
}

TEST(AtomicFile, FallsBackToATemporaryNameWhereUnnamedFilesAreRefused) {
  TempDir dir;
  NamedFallback named;
  const std::string path = dir / "r.csv";
  AtomicFile file(path);
  EXPECT_FALSE(file.unnamed());
  file.stream() << "a,b\n";
  EXPECT_EQ(names_in(dir.path()),
            std::vector<std::string>{"r.csv" + temp_suffix()});  // the fallback's known cost
  file.commit();
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"r.csv"});
  EXPECT_EQ(read(path), "a,b\n");
}

TEST(AtomicFile, TheFallbackNameIsRemovedOnAStopSignalsCleanUp) {
  TempDir dir;
  NamedFallback named;
  AtomicFile file(dir / "r.json");
  file.stream() << "x";
  ASSERT_FALSE(names_in(dir.path()).empty());
  remove_temp_files();  // what a signal handler or the watchdog runs
  EXPECT_TRUE(names_in(dir.path()).empty());
}

TEST(AtomicFile, OnlyTheErrorsOfAFileSystemWithoutUnnamedFilesFallBack) {
  for (int e : {EOPNOTSUPP, EISDIR, EINVAL}) EXPECT_TRUE(unnamed_files_refused(e)) << e;
  for (int e : {EACCES, EPERM, EROFS, ENOSPC, ENOENT, EDQUOT}) {
    EXPECT_FALSE(unnamed_files_refused(e)) << e;
  }
}

TEST(AtomicFile, AnUnwritableDirectoryIsAUsageErrorInBothWays) {
  for (bool fallback : {false, true}) {
    std::optional<NamedFallback> named;
    if (fallback) named.emplace();
    try {
      AtomicFile file("/nonexistent-dir/r.json");
      FAIL() << "opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/r.json"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace cb
