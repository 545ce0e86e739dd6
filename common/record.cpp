#include "common/record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

using nlohmann::json;

// Calls `fn` with the field's value in `r`: its member, or its value derived from the others.
template <typename F>
void field_value(const RecordField& f, const ResultRecord& r, F&& fn) {
  std::visit(
      [&](auto v) {
        if constexpr (std::is_member_object_pointer_v<decltype(v)>) {
          fn(r.*v);
        } else {
          fn(v(r));
        }
      },
      f.value);
}

// Calls `fn` with the field's member in `r`; nothing for a derived field (never read back).
template <typename F>
void field_member(const RecordField& f, ResultRecord& r, F&& fn) {
  std::visit(
      [&](auto v) {
        if constexpr (std::is_member_object_pointer_v<decltype(v)>) fn(r.*v);
      },
      f.value);
}

// ---- JSON -------------------------------------------------------------------------------------

template <typename J, typename T>
J json_value(const T& v) {
  return J(v);
}
template <typename J, typename T>
J json_value(const std::optional<T>& v) {
  return v ? J(*v) : J(nullptr);
}

// Writes the fields that have every flag of `only` (all fields for 0), in table order.
template <typename J>
void write_json_fields(J& j, const ResultRecord& r, unsigned only = 0) {
  for (const auto& f : kResultFields) {
    if ((f.flags & only) != only) continue;
    field_value(f, r, [&](const auto& v) { j[std::string(f.name)] = json_value<J>(v); });
  }
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

// One field of a JSON record, checked against its row's type.
struct JsonCell {
  const json& record;
  const RecordField& row;
  std::string key = std::string(row.name);

  // Absent or null: what an empty optional, or a later column of an older file, reads as.
  bool empty() const {
    auto it = record.find(key);
    return it == record.end() || it->is_null();
  }
  void read(std::string& out) const { out = get_string(record, key.c_str()); }
  void read(int& out) const {
    if (!(row.flags & kSigned)) {
      out = static_cast<int>(get_count(record, key.c_str()));
      return;
    }
    const json& v = field(record, key.c_str());
    if (!v.is_number_integer()) usage_error("result field '{}' must be an integer", key);
    out = v.get<int>();
  }
  void read(std::uint64_t& out) const { out = get_count(record, key.c_str()); }
  void read(double& out) const { out = get_number(record, key.c_str()); }
  template <typename T>
  void read(std::optional<T>& out) const {
    out.reset();
    if (!empty()) read(out.emplace());
  }
};

// Reads the fields that have every flag of `only` (all fields for 0).
void read_json_fields(const json& j, ResultRecord& r, unsigned only = 0) {
  for (const auto& f : kResultFields) {
    if ((f.flags & only) != only) continue;
    JsonCell cell{j, f};
    field_member(f, r, [&](auto& member) {
      if ((f.flags & kLater) && cell.empty()) {
        member = {};
      } else {
        cell.read(member);
      }
    });
  }
}

// `rank_time_us`, when the record has it.
template <typename J>
void rank_time_to_json(J& j, const ResultRecord& r) {
  if (!r.rank_time) return;
  const RankTimes& t = *r.rank_time;
  J o = J::object();
  o["min"] = t.min_us;
  o["median"] = t.median_us;
  o["max"] = t.max_us;
  o["slowest_rank"] = t.slowest_rank;
  o["slowest_host"] = t.slowest_host;
  o["slowest_gpu"] = json_value<J>(t.slowest_gpu);
  o["slowest_core"] = json_value<J>(t.slowest_core);
  j["rank_time_us"] = o;
}

std::optional<RankTimes> rank_time_from_json(const json& j) {
  auto it = j.find("rank_time_us");
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) usage_error("result field 'rank_time_us' must be an object");
  const json& o = *it;
  auto index = [&](const char* key) -> std::optional<int> {
    auto v = o.find(key);
    if (v == o.end() || v->is_null()) return std::nullopt;
    return static_cast<int>(get_count(o, key));
  };
  RankTimes t;
  t.min_us = get_number(o, "min");
  t.median_us = get_number(o, "median");
  t.max_us = get_number(o, "max");
  t.slowest_rank = static_cast<int>(get_count(o, "slowest_rank"));
  t.slowest_host = get_string(o, "slowest_host");
  t.slowest_gpu = index("slowest_gpu");
  t.slowest_core = index("slowest_core");
  return t;
}

// `lateness`, when the record has it.
template <typename J>
void lateness_to_json(J& j, const ResultRecord& r) {
  if (!r.lateness) return;
  const CaseLateness& l = *r.lateness;
  J o = J::object();
  o["calls"] = l.calls;
  o["rank"] = l.rank;
  o["host"] = l.host;
  o["last_share"] = l.last_share;
  o["late_us"] = l.late_us;
  o["delay_cost"] = l.delay_cost;
  o["wait_us"] = l.wait_us;
  o["inside_us"] = l.inside_us;
  o["clock_error_us"] = l.clock_error_us;
  j["lateness"] = o;
}

std::optional<CaseLateness> lateness_from_json(const json& j) {
  auto it = j.find("lateness");
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) usage_error("result field 'lateness' must be an object");
  const json& o = *it;
  CaseLateness l;
  l.calls = get_count(o, "calls");
  l.rank = static_cast<int>(get_count(o, "rank"));
  l.host = get_string(o, "host");
  l.last_share = get_number(o, "last_share");
  l.late_us = get_number(o, "late_us");
  l.delay_cost = get_number(o, "delay_cost");
  l.wait_us = get_number(o, "wait_us");
  l.inside_us = get_number(o, "inside_us");
  l.clock_error_us = get_number(o, "clock_error_us");
  return l;
}

// The measured figures of one repetition inside a summary record.
template <typename J>
J repeat_json(const ResultRecord& r) {
  J j = J::object();
  j["repeat"] = r.repeat.value_or(0);
  write_json_fields(j, r, kFigure);
  rank_time_to_json(j, r);
  lateness_to_json(j, r);
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

// The value of a record's `repeat` field: a repetition's 0-based index.
int repeat_index(const json& v) {
  if (!v.is_number_integer() || v.get<int>() < 0) {
    usage_error("result field 'repeat' must be a non-negative integer");
  }
  return v.get<int>();
}

// Reads a repetition's figures; the other fields come from its summary record.
ResultRecord repeat_from_json(const json& j, const ResultRecord& summary) {
  if (!j.is_object()) usage_error("result field 'repeats' must hold objects");
  ResultRecord r = summary;
  r.repeats.clear();
  r.repeat = repeat_index(field(j, "repeat"));
  read_json_fields(j, r, kFigure);
  r.rank_time = rank_time_from_json(j);
  r.lateness = lateness_from_json(j);
  return r;
}

// ---- CSV --------------------------------------------------------------------------------------

std::string number(double v) {
  return fmt::format("{:.6g}", v);
}

std::string csv_text(const std::string& v) {
  return v;
}
std::string csv_text(int v) {
  return std::to_string(v);
}
std::string csv_text(std::uint64_t v) {
  return std::to_string(v);
}
std::string csv_text(double v) {
  return number(v);
}
std::string csv_text(bool v) {
  return v ? "true" : "false";
}
template <typename T>
std::string csv_text(const std::optional<T>& v) {
  return v ? csv_text(*v) : std::string();
}

// One CSV field read back into its row's member; `where` names the row for errors.
struct CsvCell {
  const std::string& text;
  const RecordField& field;
  std::string_view where;

  std::string what() const { return fmt::format("{} column '{}'", where, field.name); }
  std::int64_t integer() const {
    std::int64_t v = parse_int(text, what());
    if (v < 0 && !(field.flags & kSigned)) {
      usage_error("{}: column '{}' is negative", where, field.name);
    }
    return v;
  }
  void read(std::string& out) const { out = text; }
  void read(int& out) const { out = static_cast<int>(integer()); }
  void read(std::uint64_t& out) const { out = static_cast<std::uint64_t>(integer()); }
  void read(double& out) const {
    out = parse_double(text, what());
    if (out < 0) usage_error("{}: column '{}' is negative", where, field.name);
  }
  template <typename T>
  void read(std::optional<T>& out) const {
    out.reset();
    if (!text.empty()) read(out.emplace());
  }
};

}  // namespace

void to_json(json& j, const ResultRecord& r) {
  j = json::object();
  write_json_fields(j, r);
  rank_time_to_json(j, r);
  lateness_to_json(j, r);
  repetition_fields_to_json(j, r);
}

void from_json(const json& j, ResultRecord& r) {
  if (!j.is_object()) usage_error("result record must be a JSON object");
  read_json_fields(j, r);
  r.rank_time = rank_time_from_json(j);
  r.lateness = lateness_from_json(j);
  r.repeat.reset();
  if (auto it = j.find("repeat"); it != j.end() && !it->is_null()) r.repeat = repeat_index(*it);
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
  if (!m.incomplete.is_null()) j["incomplete"] = m.incomplete;
  if (!m.launches.empty()) j["launches"] = m.launches;
  if (!m.split.is_null()) j["split"] = m.split;
  if (m.straggler) {
    const RankStraggler& st = *m.straggler;
    j["straggler"] = json{{"found", st.found},
                          {"rank", st.rank},
                          {"host", st.host},
                          {"gpu", json_value<json>(st.gpu)},
                          {"core", json_value<json>(st.core)},
                          {"slowest_cases", st.slowest_cases},
                          {"cases", st.cases},
                          {"ratio", st.ratio},
                          {"component", st.component},
                          {"host_ranks", st.host_ranks},
                          {"calls", st.calls},
                          {"last_calls", st.last_calls},
                          {"participants", st.participants},
                          {"late_us", st.late_us},
                          {"delay_cost", st.delay_cost},
                          {"wait_us", st.wait_us},
                          {"between_us", st.between_us},
                          {"late_exit_us", st.late_exit_us},
                          {"inside_us", st.inside_us},
                          {"clock_error_us", st.clock_error_us},
                          {"where", st.where}};
  }
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
  m.command_line = redact_secret_values(str("command_line"));  // as for the environment below
  m.nranks = integer("nranks");
  m.nnodes = integer("nnodes");
  m.ranks_per_node = integer("ranks_per_node");
  m.repetitions = integer("repetitions");
  if (auto it = j.find("incomplete"); it != j.end() && it->is_object()) m.incomplete = *it;
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
  m.launches.clear();
  if (auto it = j.find("launches"); it != j.end() && it->is_array()) {
    for (const auto& x : *it) m.launches.push_back(x.get<LaunchControl>());
  }
  auto split = j.find("split");
  m.split = split != j.end() ? *split : json(nullptr);
  m.straggler.reset();
  if (auto it = j.find("straggler"); it != j.end() && it->is_object()) {
    const json& o = *it;
    auto index = [&](const char* key) -> std::optional<int> {
      auto v = o.find(key);
      if (v == o.end() || !v->is_number_integer()) return std::nullopt;
      return v->get<int>();
    };
    RankStraggler st;
    auto f = o.find("found");
    st.found = f != o.end() && f->is_boolean() && f->get<bool>();
    st.rank = index("rank").value_or(0);
    if (auto h = o.find("host"); h != o.end() && h->is_string()) st.host = h->get<std::string>();
    st.gpu = index("gpu");
    st.core = index("core");
    st.slowest_cases = index("slowest_cases").value_or(0);
    st.cases = index("cases").value_or(0);
    auto number = [&](const char* key) {
      auto x = o.find(key);
      return x != o.end() && x->is_number() ? x->get<double>() : 0.0;
    };
    auto count = [&](const char* key) {
      auto x = o.find(key);
      return x != o.end() && x->is_number_integer() && x->get<std::int64_t>() >= 0
                 ? x->get<std::uint64_t>()
                 : 0;
    };
    st.ratio = number("ratio");
    if (auto c = o.find("component"); c != o.end() && c->is_string())
      st.component = c->get<std::string>();
    if (auto h = o.find("host_ranks"); h != o.end() && h->is_array()) {
      for (const auto& x : *h)
        if (x.is_number_integer()) st.host_ranks.push_back(x.get<int>());
    }
    st.calls = count("calls");
    st.last_calls = count("last_calls");
    st.participants = static_cast<int>(count("participants"));
    st.late_us = number("late_us");
    st.delay_cost = number("delay_cost");
    st.wait_us = number("wait_us");
    st.between_us = number("between_us");
    st.late_exit_us = number("late_exit_us");
    st.inside_us = number("inside_us");
    st.clock_error_us = number("clock_error_us");
    if (auto w = o.find("where"); w != o.end() && w->is_string()) st.where = w->get<std::string>();
    m.straggler = st;
  }
}

std::string series_algorithm(const ResultRecord& r) {
  return r.env.empty() ? r.algorithm : r.algorithm + " [" + r.env + "]";
}

nlohmann::ordered_json ordered_json(const ResultRecord& r) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  write_json_fields(out, r);
  rank_time_to_json(out, r);
  lateness_to_json(out, r);
  repetition_fields_to_json(out, r);
  return out;
}

bool result_csv_header(const std::vector<std::string>& header) {
  return header.size() >= kResultColumnsRequired && header.size() <= kResultColumns.size() &&
         std::equal(header.begin(), header.end(), kResultColumns.begin());
}

std::vector<std::string> record_fields(const ResultRecord& r) {
  std::vector<std::string> out;
  for (const auto& f : kResultFields) {
    field_value(f, r, [&](const auto& v) { out.push_back(csv_text(v)); });
  }
  return out;
}

ResultRecord record_from_fields(const std::vector<std::string>& f, std::string_view where) {
  constexpr std::size_t kColumns = std::size(kResultFields);
  // Files written before the later columns have fewer fields; those read as empty.
  if (f.size() > kColumns || f.size() < kResultColumnsRequired) {
    usage_error("{}: expected {} CSV fields, found {}", where, kColumns, f.size());
  }
  ResultRecord r;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const CsvCell cell{f[i], kResultFields[i], where};
    field_member(kResultFields[i], r, [&](auto& member) { cell.read(member); });
  }
  return r;
}

bool shows_slow_calls(const ResultRecord& r) {
  if (r.p50_us <= 0) return false;
  return r.time_us > kOutlierMeanFactor * r.p50_us || r.p99_us > kOutlierTailFactor * r.p50_us;
}

bool has_outliers(const ResultRecord& r) {
  return shows_slow_calls(r) && r.outlier_cause != kSteadyCause;
}

}  // namespace cb
