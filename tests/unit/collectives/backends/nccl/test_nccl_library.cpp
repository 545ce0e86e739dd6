// The NCCL loader: the real libnccl.so.2 of this machine, and test-double libraries
// (fake_nccl.c) for what the real one cannot show: an old release, missing symbols, the search.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "collectives/backends/nccl/nccl_library.hpp"

namespace cb::nccl {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(NcclLibrary, LoadsTheInstalledLibraryWithEveryRequiredSymbol) {
  LoadResult r = try_load("");
  if (!r.library) GTEST_SKIP() << "no libnccl.so.2 here: " << r.error;
  const Library& lib = *r.library;
  EXPECT_GE(lib.code(), kMinimumVersion);
  EXPECT_FALSE(lib.path.empty());
  EXPECT_NE(lib.path.find("libnccl"), std::string::npos);
  EXPECT_NE(lib.fn.CommInitRankConfig, nullptr);
  EXPECT_NE(lib.fn.CommGetAsyncError, nullptr);
  EXPECT_NE(lib.fn.GroupEnd, nullptr);
  // 2.28 added native alltoall, gather and scatter.
  EXPECT_EQ(lib.fn.AlltoAll != nullptr, lib.at_least(2, 28));
  EXPECT_EQ(lib.fn.Gather != nullptr, lib.at_least(2, 28));
  // The id needs no GPU.
  UniqueId id{};
  EXPECT_EQ(lib.fn.GetUniqueId(&id), kSuccess);
}

TEST(NcclLibrary, AnExplicitPathThatDoesNotExistIsAUsageError) {
  LoadResult r = try_load("/nonexistent/libnccl.so.2");
  EXPECT_EQ(r.library, nullptr);
  EXPECT_EQ(r.kind, ErrorKind::Usage);
  EXPECT_TRUE(contains(r.error, "/nonexistent/libnccl.so.2")) << r.error;
  EXPECT_TRUE(contains(r.error, "no such file")) << r.error;
  EXPECT_TRUE(contains(r.error, "--nccl-lib")) << r.error;
}

TEST(NcclLibrary, ALibraryThatIsNotNcclIsNamedWithTheMissingSymbol) {
  const std::string libm = "/lib/x86_64-linux-gnu/libm.so.6";
  if (!fs::exists(libm)) GTEST_SKIP() << libm << " not here";
  LoadResult r = try_load(libm);
  EXPECT_EQ(r.library, nullptr);
  EXPECT_EQ(r.kind, ErrorKind::Usage);
  EXPECT_TRUE(contains(r.error, libm)) << r.error;
  EXPECT_TRUE(contains(r.error, "ncclGetVersion")) << r.error;
  EXPECT_THROW(load(libm), Error);
}

TEST(NcclLibrary, AReleaseBelowTheMinimumIsRefusedWithBothVersions) {
  LoadResult r = load_file(FAKE_NCCL_OLD, "test", ErrorKind::Usage);
  EXPECT_EQ(r.library, nullptr);
  EXPECT_TRUE(contains(r.error, "NCCL 2.12.12")) << r.error;
  EXPECT_TRUE(contains(r.error, "too old")) << r.error;
  EXPECT_TRUE(contains(r.error, "2.14.0 or newer")) << r.error;
  EXPECT_TRUE(contains(r.error, FAKE_NCCL_OLD)) << r.error;
}

TEST(NcclLibrary, MissingSymbolsAreListedByName) {
  LoadResult r = load_file(FAKE_NCCL_PARTIAL, "test", ErrorKind::Usage);
  EXPECT_EQ(r.library, nullptr);
  EXPECT_TRUE(contains(r.error, "ncclCommInitRankConfig")) << r.error;
  EXPECT_TRUE(contains(r.error, "ncclCommAbort")) << r.error;
  EXPECT_FALSE(contains(r.error, "ncclAllReduce")) << r.error;
  EXPECT_TRUE(contains(r.error, FAKE_NCCL_PARTIAL)) << r.error;
}

TEST(NcclLibrary, ADirectoryMeansItsLibncclSo2) {
  fs::path dir =
      fs::temp_directory_path() / fs::path("cbtest-nccl-dir-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(FAKE_NCCL_FULL, dir / "libnccl.so.2", fs::copy_options::overwrite_existing);
  LoadResult r = load_file(dir.string(), "--nccl-lib", ErrorKind::Usage);
  ASSERT_NE(r.library, nullptr) << r.error;
  EXPECT_EQ(r.library->version.text(), "2.28.9");
  EXPECT_TRUE(contains(r.library->path, dir.string())) << r.library->path;
  fs::remove_all(dir);
}

TEST(NcclLibrary, CommbenchNcclLibIsUsedWhenNoPathIsGiven) {
  ::setenv("COMMBENCH_NCCL_LIB", FAKE_NCCL_OLD, 1);
  LoadResult r = try_load("");
  ::unsetenv("COMMBENCH_NCCL_LIB");
  EXPECT_EQ(r.library, nullptr);
  EXPECT_EQ(r.kind, ErrorKind::Usage);
  EXPECT_TRUE(contains(r.error, "COMMBENCH_NCCL_LIB")) << r.error;
  EXPECT_TRUE(contains(r.error, "too old")) << r.error;
  // --nccl-lib wins over the variable.
  ::setenv("COMMBENCH_NCCL_LIB", "/nonexistent", 1);
  LoadResult explicit_path = try_load(FAKE_NCCL_FULL);
  ::unsetenv("COMMBENCH_NCCL_LIB");
  EXPECT_NE(explicit_path.library, nullptr) << explicit_path.error;
}

TEST(NcclLibrary, KnownPlacesCoverToolkitsAndPythonPackages) {
  fs::path root =
      fs::temp_directory_path() / fs::path("cbtest-nccl-places-" + std::to_string(getpid()));
  auto make = [&](const fs::path& rel) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << "x";
    return (root / rel).string();
  };
  std::string venv = make("venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2");
  std::string local = make("home/.local/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
  std::string dist = make("usr/local/lib/python3.11/dist-packages/nvidia/nccl/lib/libnccl.so.2");
  std::string toolkit_new = make("cuda-13.0/lib64/libnccl.so.2");
  std::string toolkit_old = make("cuda-12.4/lib64/libnccl.so.2");
  std::string conda = make("conda/lib/libnccl.so.2");
  make("venv/lib/python3.11/site-packages/nvidia/other/lib/libnccl.so.2");  // not NCCL's package

  PlaceEnvironment env;
  env.cuda_home.clear();
  env.virtual_env = (root / "venv").string();
  env.conda_prefix = (root / "conda").string();
  env.home = (root / "home").string();
  env.system_roots = {(root / "cuda-*").string()};
  env.python_roots = {(root / "usr/local/lib").string()};
  std::vector<std::string> places = known_places(env);
  const std::vector<std::string> expected = {toolkit_new, toolkit_old, venv, conda, local, dist};
  EXPECT_EQ(places, expected);
  fs::remove_all(root);
}

}  // namespace
}  // namespace cb::nccl
