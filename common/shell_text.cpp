#include "common/shell_text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cb {

namespace {
bool control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}
}  // namespace

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), control);
}

std::string shell_comment(std::string_view text) {
  std::string line = "# ";
  for (char c : text) {
    if (!control(c)) {
      line += c;
    } else if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else if (c == '\t') {
      line += "\\t";
    } else {
      line += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    }
  }
  return line + "\n";
}

}  // namespace cb
