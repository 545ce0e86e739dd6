#include "report/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

extern char** environ;

namespace cb {

namespace {

using nlohmann::json;

template <typename T>
void opt_to_json(json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? json(*v) : json(nullptr);
}

const json& field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) usage_error("result record has no '{}' field", key);
  return *it;
}

std::string get_string(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) usage_error("result field '{}' must be a string", key);
  return v.get<std::string>();
}

double get_number(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number()) usage_error("result field '{}' must be a number", key);
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0) usage_error("result field '{}' has invalid value {}", key, d);
  return d;
}

std::uint64_t get_count(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
    usage_error("result field '{}' must be a non-negative integer", key);
  }
  return v.get<std::uint64_t>();
}

std::optional<double> get_opt_number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return get_number(j, key);
}

std::string number(double v) {
  return fmt::format("{:.6g}", v);
}

// The measured figures of one repetition inside a summary record.
template <typename J>
J repeat_json(const ResultRecord& r) {
  J j = {{"repeat", r.repeat.value_or(0)},
         {"iters", r.iters},
         {"time_us", r.time_us},
         {"min_us", r.min_us},
         {"p50_us", r.p50_us},
         {"p99_us", r.p99_us},
         {"max_us", r.max_us},
         {"cv", r.cv}};
  j["algbw_GBps"] = r.algbw_GBps ? J(*r.algbw_GBps) : J(nullptr);
  j["busbw_GBps"] = r.busbw_GBps ? J(*r.busbw_GBps) : J(nullptr);
  j["wrong"] = r.wrong ? J(*r.wrong) : J(nullptr);
  return j;
}

template <typename J>
void repetition_fields_to_json(J& j, const ResultRecord& r) {
  if (r.repeat) j["repeat"] = *r.repeat;
  if (!r.repeats.empty()) {
    j["repetitions"] = r.repeats.size();
    J list = J::array();
    for (const auto& x : r.repeats) list.push_back(repeat_json<J>(x));
    j["repeats"] = list;
  }
}

// The measured figures of a record (or of one repetition inside a summary).
void read_figures(const json& j, ResultRecord& r) {
  r.iters = get_count(j, "iters");
  r.time_us = get_number(j, "time_us");
  r.min_us = get_number(j, "min_us");
  r.p50_us = get_number(j, "p50_us");
  r.p99_us = get_number(j, "p99_us");
  r.max_us = get_number(j, "max_us");
  r.cv = get_number(j, "cv");
  r.algbw_GBps = get_opt_number(j, "algbw_GBps");
  r.busbw_GBps = get_opt_number(j, "busbw_GBps");
  auto w = j.find("wrong");
  if (w == j.end() || w->is_null()) {
    r.wrong.reset();
  } else {
    r.wrong = get_count(j, "wrong");
  }
}

// Reads a repetition's figures; the key fields come from its summary record.
ResultRecord repeat_from_json(const json& j, const ResultRecord& summary) {
  if (!j.is_object()) usage_error("result field 'repeats' must hold objects");
  ResultRecord r = summary;
  r.repeats.clear();
  const json& index = field(j, "repeat");
  if (!index.is_number_integer() || index.get<int>() < 0) {
    usage_error("result field 'repeat' must be a non-negative integer");
  }
  r.repeat = index.get<int>();
  read_figures(j, r);
  return r;
}

}  // namespace

void to_json(json& j, const ResultRecord& r) {
  j = json{{"backend", r.backend},
           {"library", r.library},
           {"algorithm", r.algorithm},
           {"collective", r.collective},
           {"dtype", r.dtype},
           {"op", r.op},
           {"placement", r.placement},
           {"root", r.root},
           {"nranks", r.nranks},
           {"nnodes", r.nnodes},
           {"bytes", r.bytes},
           {"count", r.count},
           {"iters", r.iters},
           {"time_us", r.time_us},
           {"min_us", r.min_us},
           {"p50_us", r.p50_us},
           {"p99_us", r.p99_us},
           {"max_us", r.max_us},
           {"cv", r.cv}};
  opt_to_json(j, "algbw_GBps", r.algbw_GBps);
  opt_to_json(j, "busbw_GBps", r.busbw_GBps);
  opt_to_json(j, "wrong", r.wrong);
  j["env"] = r.env;
  j["outliers"] = has_outliers(r);  // derived from the figures; not read back
  repetition_fields_to_json(j, r);
}

void from_json(const json& j, ResultRecord& r) {
  if (!j.is_object()) usage_error("result record must be a JSON object");
  r.backend = get_string(j, "backend");
  r.library = get_string(j, "library");
  r.algorithm = get_string(j, "algorithm");
  r.collective = get_string(j, "collective");
  r.dtype = get_string(j, "dtype");
  r.op = get_string(j, "op");
  r.placement = get_string(j, "placement");
  const json& root = field(j, "root");
  if (!root.is_number_integer()) usage_error("result field 'root' must be an integer");
  r.root = root.get<int>();
  r.nranks = static_cast<int>(get_count(j, "nranks"));
  r.nnodes = static_cast<int>(get_count(j, "nnodes"));
  r.bytes = get_count(j, "bytes");
  r.count = get_count(j, "count");
  read_figures(j, r);
  r.env.clear();
  if (auto it = j.find("env"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) usage_error("result field 'env' must be a string");
    r.env = it->get<std::string>();
  }
  r.repeat.reset();
  if (auto it = j.find("repeat"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int>() < 0) {
      usage_error("result field 'repeat' must be a non-negative integer");
    }
    r.repeat = it->get<int>();
  }
  r.repeats.clear();
  if (auto it = j.find("repeats"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) usage_error("result field 'repeats' must be an array");
    for (const auto& x : *it) r.repeats.push_back(repeat_from_json(x, r));
  }
}

void to_json(json& j, const RunMeta& m) {
  j = json{{"commbench_version", m.version},
           {"git_commit", m.git_commit},
           {"start_time", m.start_time},
           {"command_line", m.command_line},
           {"hosts", m.hosts},
           {"nranks", m.nranks},
           {"nnodes", m.nnodes},
           {"ranks_per_node", m.ranks_per_node},
           {"libraries", m.libraries},
           {"environment", m.environment},
           {"launcher", m.launcher},
           {"topology", m.topology}};
  if (m.repetitions > 0) j["repetitions"] = m.repetitions;
  if (!m.backend_choice.empty()) j["backend_choice"] = m.backend_choice;
  j["environment_mismatch"] = m.environment_mismatch;
  if (!m.env_failures.empty()) j["env_failures"] = m.env_failures;
}

void from_json(const json& j, RunMeta& m) {
  if (!j.is_object()) usage_error("result 'meta' must be a JSON object");
  auto str = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto integer = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
  };
  m.version = str("commbench_version");
  m.git_commit = str("git_commit");
  m.start_time = str("start_time");
  m.command_line = str("command_line");
  m.nranks = integer("nranks");
  m.nnodes = integer("nnodes");
  m.ranks_per_node = integer("ranks_per_node");
  m.repetitions = integer("repetitions");
  m.hosts.clear();
  if (auto it = j.find("hosts"); it != j.end() && it->is_array()) {
    for (const auto& h : *it) {
      if (h.is_string()) m.hosts.push_back(h.get<std::string>());
    }
  }
  auto string_map = [&](const char* key) {
    std::map<std::string, std::string> out;
    if (auto it = j.find(key); it != j.end() && it->is_object()) {
      for (const auto& [k, v] : it->items()) {
        if (v.is_string()) out[k] = v.get<std::string>();
      }
    }
    return out;
  };
  m.libraries = string_map("libraries");
  m.environment = string_map("environment");
  // Files written before the filter matched every spelling may still hold secrets: drop them on
  // read so that nothing derived from a result file (compare, Markdown, gbench) repeats them.
  std::erase_if(m.environment, [](const auto& kv) { return secret_name(kv.first); });
  m.launcher = string_map("launcher");
  if (auto it = j.find("backend_choice"); it != j.end() && it->is_string()) {
    m.backend_choice = it->get<std::string>();
  }
  m.environment_mismatch.clear();
  if (auto it = j.find("environment_mismatch"); it != j.end() && it->is_array()) {
    for (const auto& x : *it) {
      if (x.is_string()) m.environment_mismatch.push_back(x.get<std::string>());
    }
  }
  auto topo = j.find("topology");
  m.topology = topo != j.end() ? *topo : json(nullptr);
}

std::string series_algorithm(const ResultRecord& r) {
  return r.env.empty() ? r.algorithm : r.algorithm + " [" + r.env + "]";
}

nlohmann::ordered_json ordered_json(const ResultRecord& r) {
  const json plain = r;
  nlohmann::ordered_json out;
  for (auto column : kResultColumns) {
    std::string key(column);
    out[key] = plain.at(key);
  }
  repetition_fields_to_json(out, r);
  return out;
}

std::vector<std::string> record_fields(const ResultRecord& r) {
  auto opt = [](const auto& v) { return v ? number(static_cast<double>(*v)) : std::string(); };
  return {r.backend,
          r.library,
          r.algorithm,
          r.collective,
          r.dtype,
          r.op,
          r.placement,
          std::to_string(r.root),
          std::to_string(r.nranks),
          std::to_string(r.nnodes),
          std::to_string(r.bytes),
          std::to_string(r.count),
          std::to_string(r.iters),
          number(r.time_us),
          number(r.min_us),
          number(r.p50_us),
          number(r.p99_us),
          number(r.max_us),
          number(r.cv),
          opt(r.algbw_GBps),
          opt(r.busbw_GBps),
          r.wrong ? std::to_string(*r.wrong) : std::string(),
          r.env,
          has_outliers(r) ? "true" : "false"};
}

ResultRecord record_from_fields(const std::vector<std::string>& f, std::string_view where) {
  constexpr std::size_t kColumns = std::size(kResultColumns);
  // Files written before the later columns have fewer fields; `outliers` is derived from the
  // figures, so it is not read back.
  if (f.size() > kColumns || f.size() < kResultColumnsBeforeEnv) {
    usage_error("{}: expected {} CSV fields, found {}", where, kColumns, f.size());
  }
  auto num = [&](std::size_t i) {
    double v = parse_double(f[i], fmt::format("{} column '{}'", where, kResultColumns[i]));
    if (v < 0) usage_error("{}: column '{}' is negative", where, kResultColumns[i]);
    return v;
  };
  auto count = [&](std::size_t i) {
    std::int64_t v = parse_int(f[i], fmt::format("{} column '{}'", where, kResultColumns[i]));
    if (v < 0) usage_error("{}: column '{}' is negative", where, kResultColumns[i]);
    return static_cast<std::uint64_t>(v);
  };
  ResultRecord r;
  r.backend = f[0];
  r.library = f[1];
  r.algorithm = f[2];
  r.collective = f[3];
  r.dtype = f[4];
  r.op = f[5];
  r.placement = f[6];
  r.root = static_cast<int>(parse_int(f[7], fmt::format("{} column 'root'", where)));
  r.nranks = static_cast<int>(count(8));
  r.nnodes = static_cast<int>(count(9));
  r.bytes = count(10);
  r.count = count(11);
  r.iters = count(12);
  r.time_us = num(13);
  r.min_us = num(14);
  r.p50_us = num(15);
  r.p99_us = num(16);
  r.max_us = num(17);
  r.cv = num(18);
  if (!f[19].empty()) r.algbw_GBps = num(19);
  if (!f[20].empty()) r.busbw_GBps = num(20);
  if (!f[21].empty()) r.wrong = count(21);
  if (f.size() > 22) r.env = f[22];
  return r;
}

bool has_outliers(const ResultRecord& r) {
  if (r.p50_us <= 0) return false;
  return r.time_us > kOutlierMeanFactor * r.p50_us || r.p99_us > kOutlierTailFactor * r.p50_us;
}

bool secret_name(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kSecret = {
      "KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "AUTH", "PRIVATE"};
  std::string upper(name);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::any_of(kSecret.begin(), kSecret.end(),
                     [&](std::string_view s) { return upper.find(s) != std::string::npos; });
}

bool steering_variable(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kPrefixes = {"NCCL_",
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
                                                                 "HCOLL_"};
  // Launcher bookkeeping (common/environment.hpp) and commbench's own per-rank launch variables:
  // they steer nothing and would make runs differ.
  static constexpr std::array<std::string_view, 6> kOwnLaunch = {
      "COMMBENCH_LOCAL_",     "COMMBENCH_RELAUNCHED", "COMMBENCH_RANK_STATUS",
      "COMMBENCH_RANK_WATCH", "COMMBENCH_TMP_TAG",    "COMMBENCH_TEST_"};
  bool steering = false;
  for (auto p : kPrefixes) steering = steering || name.substr(0, p.size()) == p;
  for (auto p : kOwnLaunch) steering = steering && name.substr(0, p.size()) != p;
  // The test-only fault steers the timed loop (slow:R:US), so a run that had it says so.
  steering = steering || name == "COMMBENCH_TEST_FAULT";
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
