#include "common/replay_record.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/error.hpp"

namespace cb {

using OJson = nlohmann::ordered_json;

namespace {

using nlohmann::json;

const json& field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) usage_error("replay record has no '{}' field", key);
  return *it;
}

std::string text(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) usage_error("replay field '{}' must be a string", key);
  return v.get<std::string>();
}

double number(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number()) usage_error("replay field '{}' must be a number", key);
  const double d = v.get<double>();
  if (!std::isfinite(d)) usage_error("replay field '{}' has invalid value {}", key, d);
  return d;
}

std::uint64_t count(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
    usage_error("replay field '{}' must be a non-negative integer", key);
  }
  return v.get<std::uint64_t>();
}

template <typename T>
std::optional<T> optional(const json& j, const char* key, T (*get)(const json&, const char*)) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return get(j, key);
}

template <typename T>
OJson maybe(const std::optional<T>& v) {
  return v ? OJson(*v) : OJson(nullptr);
}

}  // namespace

std::string ReplayRecord::setting() const {
  std::string s = backend + " " + pattern;
  if (bucket_cap_mb) s += fmt::format(" cap {:g} MiB", *bucket_cap_mb);
  if (first_bucket_mb) s += fmt::format(" (first {:g} MiB)", *first_bucket_mb);
  return s;
}

bool ReplayRecord::same_setting(const ReplayRecord& o) const {
  return backend == o.backend && pattern == o.pattern && bucket_cap_mb == o.bucket_cap_mb &&
         first_bucket_mb == o.first_bucket_mb;
}

void to_json(OJson& j, const ReplayOpRecord& r) {
  j = OJson::object();
  j["index"] = r.index;
  j["collective"] = r.collective;
  j["dtype"] = r.dtype;
  j["phase"] = r.phase;
  j["label"] = r.label;
  j["tensors"] = r.tensors;
  j["params"] = r.params;
  j["count"] = r.count;
  j["bytes"] = r.bytes;
  j["start_us"] = r.start_us;
  j["end_us"] = r.end_us;
  j["time_us"] = r.time_us;
}

void from_json(const json& j, ReplayOpRecord& r) {
  r.index = static_cast<int>(count(j, "index"));
  r.collective = text(j, "collective");
  r.dtype = text(j, "dtype");
  r.phase = text(j, "phase");
  r.label = text(j, "label");
  r.tensors = count(j, "tensors");
  r.params = count(j, "params");
  r.count = count(j, "count");
  r.bytes = count(j, "bytes");
  r.start_us = number(j, "start_us");
  r.end_us = number(j, "end_us");
  r.time_us = number(j, "time_us");
}

void to_json(OJson& j, const ReplayRecord& r) {
  j = OJson::object();
  j["backend"] = r.backend;
  j["library"] = r.library;
  j["pattern"] = r.pattern;
  j["model"] = r.model;
  j["nranks"] = r.nranks;
  j["nnodes"] = r.nnodes;
  j["bucket_cap_mb"] = maybe(r.bucket_cap_mb);
  j["first_bucket_mb"] = maybe(r.first_bucket_mb);
  j["params"] = r.params;
  j["bytes"] = r.bytes;
  j["warmup"] = r.warmup;
  j["steps"] = r.steps;
  j["step_us"] = r.step_us;
  j["step_min_us"] = r.step_min_us;
  j["step_max_us"] = r.step_max_us;
  j["compute_us"] = r.compute_us;
  j["comm_us"] = r.comm_us;
  j["exposed_us"] = r.exposed_us;
  j["overlap"] = maybe(r.overlap);
  j["wrong"] = maybe(r.wrong);
  if (r.repeat) j["repeat"] = *r.repeat;
  j["collectives"] = r.ops;
  if (!r.launches.empty()) j["launches"] = r.launches;
}

void from_json(const json& j, ReplayRecord& r) {
  r.backend = text(j, "backend");
  r.library = text(j, "library");
  r.pattern = text(j, "pattern");
  r.model = text(j, "model");
  r.nranks = static_cast<int>(count(j, "nranks"));
  r.nnodes = static_cast<int>(count(j, "nnodes"));
  r.bucket_cap_mb = optional<double>(j, "bucket_cap_mb", number);
  r.first_bucket_mb = optional<double>(j, "first_bucket_mb", number);
  r.params = count(j, "params");
  r.bytes = count(j, "bytes");
  r.warmup = static_cast<int>(count(j, "warmup"));
  r.steps = static_cast<int>(count(j, "steps"));
  r.step_us = number(j, "step_us");
  r.step_min_us = number(j, "step_min_us");
  r.step_max_us = number(j, "step_max_us");
  r.compute_us = number(j, "compute_us");
  r.comm_us = number(j, "comm_us");
  r.exposed_us = number(j, "exposed_us");
  r.overlap = optional<double>(j, "overlap", number);
  r.wrong = optional<std::uint64_t>(j, "wrong", count);
  if (auto it = j.find("repeat"); it != j.end() && !it->is_null()) {
    r.repeat = static_cast<int>(count(j, "repeat"));
  }
  const json& ops = field(j, "collectives");
  if (!ops.is_array()) usage_error("replay field 'collectives' must be an array");
  r.ops = ops.get<std::vector<ReplayOpRecord>>();
  if (auto it = j.find("launches"); it != j.end()) {
    if (!it->is_array()) usage_error("replay field 'launches' must be an array");
    r.launches = it->get<std::vector<ReplayRecord>>();
  }
}

void to_json(OJson& j, const ReplayVerdict& v) {
  j = OJson::object();
  j["backend"] = v.backend;
  j["outcome"] = v.outcome;
  j["reference_cap_mb"] = v.reference_cap_mb;
  j["chosen_cap_mb"] = v.chosen_cap_mb;
  j["candidate_cap_mb"] = v.candidate_cap_mb;
  j["line"] = v.line;
}

void from_json(const json& j, ReplayVerdict& v) {
  v.backend = text(j, "backend");
  v.outcome = text(j, "outcome");
  v.reference_cap_mb = number(j, "reference_cap_mb");
  v.chosen_cap_mb = number(j, "chosen_cap_mb");
  v.candidate_cap_mb = number(j, "candidate_cap_mb");
  v.line = text(j, "line");
}

OJson replay_document(const ReplayReport& report) {
  OJson doc;
  doc["schema"] = kReplaySchema;
  doc["meta"] = json(report.meta);
  doc["replays"] = report.records;
  doc["verdicts"] = report.verdicts;
  return doc;
}

ReplayReport parse_replay_document(const std::string& text_in, const std::string& where) {
  json doc;
  try {
    doc = json::parse(text_in);
  } catch (const json::exception& e) {
    usage_error("{}: not JSON: {}", where, e.what());
  }
  if (!doc.is_object() || doc.value("schema", "") != kReplaySchema) {
    usage_error("{}: not a replay document (schema {})", where, kReplaySchema);
  }
  ReplayReport r;
  try {
    r.meta = doc.at("meta").get<RunMeta>();
    r.records = doc.at("replays").get<std::vector<ReplayRecord>>();
    r.verdicts = doc.at("verdicts").get<std::vector<ReplayVerdict>>();
  } catch (const json::exception& e) {
    usage_error("{}: {}", where, e.what());
  }
  return r;
}

}  // namespace cb
