// Which files a command reads and writes, compared by what they are on disk, not by their names:
// an output must never replace an input or another output, whichever name, link or hard link
// reaches it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cb {

// A file as the command line names it: the option (or argument) and the path.
struct NamedFile {
  std::string option;  // "--output", "--junit", "RESULTS"
  std::string path;
};

// Usage error "OPTION 'PATH' names the same file as OPTION 'PATH'" when an output is an input or
// another output. Existing files are the same when their device and inode are (symbolic links
// followed, hard links alike); an output not yet there is the same as another when both name
// one entry of one directory (its parent resolved, a dangling link to where it points). Inputs
// that do not exist are left to their reader; empty paths (an option not given) are skipped.
void check_distinct_files(const std::vector<NamedFile>& outputs,
                          const std::vector<NamedFile>& inputs = {});

// The same for outputs given by one option (run's --output).
void check_distinct_outputs(const std::vector<std::string>& paths,
                            const std::vector<NamedFile>& inputs = {});

}  // namespace cb
