#include "launch/launcher_message.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace cb {

namespace {

constexpr std::size_t kLongestMessage = 300;

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

bool has_alnum(const std::string& s) {
  for (unsigned char c : s) {
    if (std::isalnum(c)) return true;
  }
  return false;
}

// A line of dashes, equals signs or stars: a help box's border.
bool is_rule(const std::string& s) {
  return !s.empty() && !has_alnum(s);
}

// Hydra's banner ("====", "=   BAD TERMINATION ...") and the lines after it; Open MPI's notes
// that more processes said the same. Both are about the failure's consequences.
bool is_consequence(const std::string& s) {
  static const char* kNoise[] = {"YOUR APPLICATION TERMINATED WITH THE EXIT STRING",
                                 "This typically refers to a problem with your application",
                                 "Please see the FAQ page for debugging suggestions",
                                 "more process has sent help message",
                                 "more processes have sent help message",
                                 "orte_base_help_aggregate",
                                 "prte_base_help_aggregate",
                                 "terminated normally, but",
                                 "noticed that process rank",
                                 "has exited due to process rank",
                                 "Per user-direction, the job has been aborted",
                                 "ORTE_ERROR_LOG",
                                 "PRTE_ERROR_LOG"};
  if (!s.empty() && s[0] == '=') return true;
  for (const char* n : kNoise) {
    if (s.find(n) != std::string::npos) return true;
  }
  return false;
}

// Open MPI's boxes that only say MPI's start-up failed: another box names why, when Open MPI
// delivered it (the ranks' boxes reach mpirun in any order).
bool is_generic(const std::string& s) {
  static const char* kGeneric[] = {"It looks like MPI_INIT failed for some reason",
                                   "It looks like opal_init failed for some reason",
                                   "It looks like orte_init failed for some reason",
                                   "An error occurred in MPI_Init"};
  for (const char* g : kGeneric) {
    if (s.find(g) != std::string::npos) return true;
  }
  return false;
}

// Open MPI 4.1's mpirun, when a rank ends as it sends a help box, drops the box and logs this.
bool is_lost_help(const std::string& s) {
  return s.find("ORTE_ERROR_LOG") != std::string::npos &&
         s.find("show_help.c") != std::string::npos;
}

bool is_key_value(const std::string& s, std::string& key, std::string& value) {
  static const std::regex kv(R"(^([A-Z][A-Za-z ]{0,19}):\s+(\S.*)$)");
  std::smatch m;
  if (!std::regex_match(s, m, kv)) return false;
  key = m[1].str();
  value = trim(m[2].str());
  return true;
}

std::string without_prefixes(std::string s) {
  static const std::regex abort_prefix(R"(^Abort\([0-9-]+\):\s*)");
  static const std::regex host_prefix(R"(^\[[^\]]*\]\s*(\*\*\*\s*)?)");
  s = std::regex_replace(s, abort_prefix, "");
  s = std::regex_replace(s, host_prefix, "");
  return trim(s);
}

// The first sentence of a paragraph; a trailing ':' or '.' is dropped.
std::string first_sentence(const std::string& paragraph) {
  std::string s = paragraph;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '.' && s[i + 1] == ' ' && i > 0 &&
        std::islower(static_cast<unsigned char>(s[i - 1]))) {
      s.resize(i);
      break;
    }
  }
  while (!s.empty() && (s.back() == ':' || s.back() == '.')) s.pop_back();
  return s;
}

std::string capped(std::string s) {
  if (s.size() > kLongestMessage) {
    s.resize(kLongestMessage - 3);
    s += "...";
  }
  return s;
}

}  // namespace

namespace {

std::string first_message(const std::vector<std::string>& lines, bool skip_generic) {
  bool after_rule = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty()) continue;
    if (is_rule(line)) {
      after_rule = true;
      continue;
    }
    if (is_consequence(line) || (skip_generic && is_generic(line))) {
      // A box that opens with a consequence is one as a whole.
      while (after_rule && i + 1 < lines.size() && !is_rule(lines[i + 1])) ++i;
      after_rule = false;
      continue;
    }
    if (!after_rule) return capped(without_prefixes(line));
    // A help box: its first paragraph, then its "Key: value" lines up to the closing rule.
    std::string paragraph, facts, key, value;
    std::size_t j = i;
    for (; j < lines.size() && !lines[j].empty() && !is_rule(lines[j]) &&
           !is_key_value(lines[j], key, value);
         ++j) {
      paragraph += (paragraph.empty() ? "" : " ") + lines[j];
    }
    for (; j < lines.size() && !is_rule(lines[j]); ++j) {
      if (is_key_value(lines[j], key, value))
        facts += (facts.empty() ? "" : ", ") + key + ": " + value;
    }
    std::string message = first_sentence(paragraph);
    if (!facts.empty()) message += " (" + facts + ")";
    return capped(message);
  }
  return {};
}

}  // namespace

std::string first_meaningful_message(const std::vector<std::string>& raw) {
  std::vector<std::string> lines;
  for (const auto& l : raw) lines.push_back(trim(l));
  std::string message = first_message(lines, true);
  if (message.empty() && std::any_of(lines.begin(), lines.end(), is_lost_help)) {
    // The box that said why was lost; a generic one that arrived says less than that.
    return "it lost the ranks' own error message (ORTE_ERROR_LOG in show_help.c, a known Open "
           "MPI 4.1 race when a rank ends at once): rerun to read it";
  }
  return message.empty() ? first_message(lines, false) : message;
}

std::string HydraBannerFilter::feed(std::string_view data) {
  std::string out;
  for (char c : data) {
    partial_ += c;
    if (c == '\n') {
      out += take_line(partial_);
      partial_.clear();
    }
  }
  return out;
}

std::string HydraBannerFilter::finish() {
  std::string out;
  if (state_ == State::Text) out = held_ + partial_;
  if (state_ == State::Tail && !is_consequence(trim(partial_))) out = partial_;
  held_.clear();
  partial_.clear();
  return out;
}

std::string HydraBannerFilter::take_line(const std::string& line) {
  const std::string text = trim(line);
  const bool rule = text.size() >= 20 && text.find_first_not_of('=') == std::string::npos;
  switch (state_) {
    case State::Banner:
      if (rule) state_ = State::Tail;
      return {};
    case State::Tail:
      if (text.empty() || is_consequence(text)) return {};
      state_ = State::Text;
      break;
    case State::Text:
      break;
  }
  // Blank lines and rules wait for the next line: they may open a banner.
  if (text.empty() || rule) {
    held_ += line;
    held_rule_ = rule;
    return {};
  }
  if (held_rule_ && text.rfind("=   BAD TERMINATION", 0) == 0) {
    held_.clear();
    held_rule_ = false;
    state_ = State::Banner;
    return {};
  }
  std::string out = held_ + line;
  held_.clear();
  held_rule_ = false;
  return out;
}

}  // namespace cb
