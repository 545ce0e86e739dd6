// The command line this process was started with, as recorded in every result file's meta.
#pragma once

#include <string>

namespace cb {

// `word` as one shell word: as it is when it holds nothing a shell would interpret, else in
// single quotes (a quote inside written '\'').
std::string shell_quote(const std::string& word);
// The original command line, shell-quoted where needed, secret values redacted
// (redact_secret_values).
std::string command_line(int argc, char** argv);
// The command line of this process, as recorded by main().
void set_invocation(std::string line);
const std::string& invocation();

}  // namespace cb
