// Outputs against inputs and each other by what they are on disk: links, hard links, other
// spellings of one directory, and files not written yet.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "temp_dir.hpp"

namespace cb {
namespace {

void touch(const std::string& path) {
  std::ofstream(path) << "{}\n";
}

std::string refusal(const std::vector<NamedFile>& outputs, const std::vector<NamedFile>& inputs) {
  try {
    check_distinct_files(outputs, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FileIdentity, AnOutputThatIsAnInputIsRefusedUnderAnyName) {
  TempDir d;
  touch(d / "a.json");
  ASSERT_EQ(::symlink((d / "a.json").c_str(), (d / "soft.json").c_str()), 0);
  ASSERT_EQ(::link((d / "a.json").c_str(), (d / "hard.json").c_str()), 0);
  for (const std::string out : {"a.json", "soft.json", "hard.json", "./sub/../a.json"}) {
    if (out.starts_with("./sub")) std::filesystem::create_directory(d / "sub");
    const std::string path = d.path() + "/" + out;
    EXPECT_EQ(refusal({{"--output", path}}, {{"BASE", d / "a.json"}}),
              "--output '" + path + "' names the same file as BASE '" + (d / "a.json") + "'");
  }
}

TEST(FileIdentity, OutputsNotYetWrittenAreComparedByTheirDirectoryEntry) {
  TempDir d;
  std::filesystem::create_directory(d / "sub");
  ASSERT_EQ(::symlink((d / "r.json").c_str(), (d / "l.csv").c_str()), 0);  // dangling
  ASSERT_EQ(::symlink((d / "sub").c_str(), (d / "alias").c_str()), 0);
  EXPECT_NE(refusal({{"--output", d / "r.json"}, {"--output", d / "l.csv"}}, {}), "");
  EXPECT_NE(refusal({{"--output", d / "sub/x.md"}, {"--junit", d / "alias/x.md"}}, {}), "");
  EXPECT_EQ(refusal({{"--output", d / "sub/x.md"}, {"--junit", d / "x.md"}}, {}), "");
}

TEST(FileIdentity, DistinctFilesAndOptionsNotGivenPass) {
  TempDir d;
  touch(d / "a.json");
  touch(d / "b.json");
  EXPECT_EQ(refusal({{"--output", d / "b.json"}, {"--junit", ""}},
                    {{"BASE", d / "a.json"}, {"--topology", ""}, {"NEW", d / "missing.json"}}),
            "");
  // A copy is another file, whatever its content.
  EXPECT_EQ(refusal({{"--output", d / "c.json"}}, {{"BASE", d / "a.json"}}), "");
}

}  // namespace
}  // namespace cb
