#include "common/environment.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

extern char** environ;

namespace cb {

using nlohmann::json;

bool secret_name(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kSecret = {
      "KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "AUTH", "PRIVATE"};
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::any_of(kSecret.begin(), kSecret.end(),
                     [&](std::string_view s) { return upper.find(s) != std::string::npos; });
}

namespace {

bool name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
// Where an assignment may begin: a word's start, after a quote or an option's `=`.
bool assignment_boundary(char c) {
  return std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '"' || c == '=' ||
         c == ',' || c == ';';
}

// The end of the value that starts at `i`: its closing quote, else the next blank.
std::size_t value_end(std::string_view text, std::size_t i) {
  if (i < text.size() && (text[i] == '\'' || text[i] == '"')) {
    std::size_t close = text.find(text[i], i + 1);
    return close == std::string_view::npos ? text.size() : close + 1;
  }
  while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != '\'' &&
         text[i] != '"') {
    ++i;
  }
  return i;
}

}  // namespace

std::string redact_secret_values(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!name_start(text[i]) || (i > 0 && !assignment_boundary(text[i - 1]))) {
      out += text[i++];
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && name_char(text[end])) ++end;
    std::string_view name = text.substr(i, end - i);
    out += name;
    i = end;
    if (i < text.size() && text[i] == '=' && secret_name(name)) {
      out += "=***";
      i = value_end(text, i + 1);
    } else if (i < text.size() && text[i] == ' ' && secret_name(name) &&
               (out.ends_with("-genv " + std::string(name)) ||
                out.ends_with("-env " + std::string(name)))) {
      out += " ***";  // MPICH's `-genv NAME VALUE`
      i = value_end(text, i + 1);
    }
  }
  return out;
}

bool steering_variable(std::string_view name) {
  static constexpr std::array<std::string_view, 13> kPrefixes = {"NCCL_",
                                                                 "OMPI_MCA_",
                                                                 "MPIR_CVAR_",
                                                                 "MPICH_",
                                                                 "UCX_",
                                                                 "GLOO_",
                                                                 "FI_",
                                                                 "CUDA_VISIBLE_DEVICES",
                                                                 "CUDA_DEVICE_ORDER",
                                                                 "COMMBENCH_",
                                                                 "PSM2_",
                                                                 "HCOLL_",
                                                                 "MALLOC_"};
  // Launcher bookkeeping (common/environment.hpp) and commbench's own per-rank launch variables:
  // they steer nothing and would make runs differ.
  // (COMMBENCH_TEST_FAULT is not among them: it steers the timed loop, so a run that had it
  // says so.)
  static constexpr std::array<std::string_view, 6> kOwnLaunch = {
      "COMMBENCH_LOCAL_", "COMMBENCH_RELAUNCHED", "COMMBENCH_RANK_STATUS", "COMMBENCH_RANK_WATCH",
      "COMMBENCH_TMP_TAG", "COMMBENCH_CASE_ORDER_SEED"};
  bool steering = false;
  for (auto p : kPrefixes) steering = steering || name.substr(0, p.size()) == p;
  for (auto p : kOwnLaunch) steering = steering && name.substr(0, p.size()) != p;
  return steering && !secret_name(name) && !launcher_bookkeeping(name);
}

std::map<std::string, std::string> steering_environment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    if (steering_variable(name)) out.emplace(std::string(name), std::string(entry.substr(eq + 1)));
  }
  return out;
}

std::vector<std::string> environment_mismatches(const std::vector<std::string>& per_rank) {
  std::vector<std::map<std::string, std::string>> envs;
  for (const auto& text : per_rank) {
    envs.push_back(json::parse(text).get<std::map<std::string, std::string>>());
  }
  std::vector<std::string> out;
  auto value = [](const std::map<std::string, std::string>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? std::string("unset") : k + "=" + it->second;
  };
  for (std::size_t r = 1; r < envs.size() && out.size() < 20; ++r) {
    std::set<std::string> names;
    for (const auto& [k, v] : envs[0]) names.insert(k);
    for (const auto& [k, v] : envs[r]) names.insert(k);
    for (const auto& k : names) {
      if (value(envs[0], k) != value(envs[r], k) && out.size() < 20) {
        out.push_back(fmt::format("{}: rank {} has {}, rank 0 {}", k, r, value(envs[r], k),
                                  value(envs[0], k)));
      }
    }
  }
  return out;
}

}  // namespace cb
