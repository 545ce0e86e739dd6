#include "launch/plan_fingerprint.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace cb {

namespace {

constexpr std::size_t kShownLength = 80;

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> unescaped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (++i == text.size()) return std::nullopt;
    switch (text[i]) {
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

}  // namespace

void PlanFingerprint::add(std::string name, std::string value) {
  options.push_back({std::move(name), std::move(value)});
}

std::string PlanFingerprint::digest() const {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : encode()) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

std::string PlanFingerprint::encode() const {
  std::string out;
  for (const auto& o : options) {
    if (!out.empty()) out += '\n';
    out += escaped(o.name) + "=" + escaped(o.value);
  }
  return out;
}

std::optional<PlanFingerprint> PlanFingerprint::decode(const std::string& text) {
  PlanFingerprint f;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) return std::nullopt;
    auto name = unescaped(line.substr(0, eq));
    auto value = unescaped(line.substr(eq + 1));
    if (!name || !value) return std::nullopt;
    f.add(std::move(*name), std::move(*value));
    start = end + 1;
  }
  return f;
}

std::optional<PlanDifference> first_difference(const PlanFingerprint& theirs,
                                               const PlanFingerprint& ours) {
  const auto& a = theirs.options;
  const auto& b = ours.options;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size() && i < b.size() && a[i] == b[i]) continue;
    if (i < a.size() && i < b.size() && a[i].name == b[i].name) {
      return PlanDifference{b[i].name, a[i].value, b[i].value};
    }
    // Another build's table: the option one of them has where the other has another or none.
    const PlanOption& o = i < b.size() ? b[i] : a[i];
    return PlanDifference{o.name, i < a.size() && a[i].name == o.name ? a[i].value : "(none)",
                          i < b.size() ? b[i].value : "(none)"};
  }
  return std::nullopt;
}

std::string shown_value(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (out.size() == kShownLength) return out + "...";
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  return out.empty() ? "''" : out;
}

}  // namespace cb
