#include "common/invocation.hpp"

#include <utility>

#include "common/environment.hpp"

namespace cb {

std::string shell_quote(const std::string& word) {
  bool plain =
      !word.empty() && word.find_first_of(" \t\n'\"\\$`*?;&|<>(){}~#!") == std::string::npos;
  if (plain) return word;
  std::string q = "'";
  for (char c : word) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  q += '\'';
  return q;
}

std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    // Recorded in every result file: a launcher prefix's `-x TOKEN=...` must not reach them.
    if (i > 0) out += ' ';
    out += shell_quote(redact_secret_values(argv[i]));
  }
  return out;
}

namespace {
std::string& invocation_storage() {
  static std::string line;
  return line;
}
}  // namespace

void set_invocation(std::string line) {
  invocation_storage() = std::move(line);
}
const std::string& invocation() {
  return invocation_storage();
}

}  // namespace cb
