#include "common/invocation.hpp"

#include <utility>

#include "common/environment.hpp"

namespace cb {

std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    // Recorded in every result file: a launcher prefix's `-x TOKEN=...` must not reach them.
    std::string a = redact_secret_values(argv[i]);
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    if (!plain) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    out += (i ? " " : "") + a;
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
