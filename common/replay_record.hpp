// What `commbench replay` measured: per setting (backend, pattern, bucket limits) the training
// step's figures and each of its collectives' (docs/replay.md defines every one), and the
// verdict of a sweep over settings. Written by report/replay/replay_output, read back by a sweep
// over launches.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "common/schema.hpp"

namespace cb {

// One collective of the step; times are medians over the timed steps of each step's slowest
// rank, in microseconds from the step's start.
struct ReplayOpRecord {
  int index = 0;           // in issue order
  std::string collective;  // allreduce, allgather, reduce_scatter
  std::string dtype;
  std::string phase;  // backward, forward
  std::string label;  // "bucket 3", "unit transformer.h.0"
  std::uint64_t tensors = 0;
  std::uint64_t params = 0;  // parameter elements, padding excluded
  std::uint64_t count = 0;   // per-rank count, as the catalogue counts it
  std::uint64_t bytes = 0;   // reported size (nccl-tests convention)
  double start_us = 0, end_us = 0, time_us = 0;
  bool operator==(const ReplayOpRecord&) const = default;
};

struct ReplayRecord {
  std::string backend;
  std::string library;
  std::string pattern;  // ddp, fsdp
  std::string model;    // a preset's name or the CSV's path
  int nranks = 0;
  int nnodes = 0;
  std::optional<double> bucket_cap_mb;    // ddp only
  std::optional<double> first_bucket_mb;  // ddp only
  std::uint64_t params = 0;               // the model's parameters
  std::uint64_t bytes = 0;                // the model's parameter bytes
  int warmup = 0;                         // untimed steps
  int steps = 0;                          // timed steps
  // Each step's figures are its slowest rank's; these are medians over the timed steps (min and
  // max of the step time besides).
  double step_us = 0, step_min_us = 0, step_max_us = 0;
  double compute_us = 0;               // the step's compute (busy-wait) time
  double comm_us = 0;                  // time at least one of its collectives was in flight
  double exposed_us = 0;               // step - compute
  std::optional<double> overlap;       // 1 - exposed / comm; empty without communication
  std::optional<std::uint64_t> wrong;  // wrong elements over every collective; empty unchecked
  std::optional<int> repeat;           // the launch of a sweep this record comes from
  std::vector<ReplayOpRecord> ops;
  // A summary over a sweep's launches: the figures above are medians over these.
  std::vector<ReplayRecord> launches;
  bool operator==(const ReplayRecord&) const = default;

  // "mpi ddp cap 25 MiB (first 1 MiB)", "gloo fsdp": how lines name the setting.
  std::string setting() const;
  // Whether two records measured the same setting (backend, pattern, bucket limits).
  bool same_setting(const ReplayRecord& other) const;
};

// A sweep's judgement, per backend: the bucket cap to use, judged against the reference cap.
struct ReplayVerdict {
  std::string backend;
  std::string outcome;          // advised, keep, inconclusive
  double reference_cap_mb = 0;  // the current setting, judged against
  double chosen_cap_mb = 0;     // the cap to use (the reference unless advised)
  double candidate_cap_mb = 0;  // the fastest other cap, which the line judges
  std::string line;             // the verdict in one line
  bool operator==(const ReplayVerdict&) const = default;
};

struct ReplayReport {
  RunMeta meta;
  std::vector<ReplayRecord> records;
  std::vector<ReplayVerdict> verdicts;
};

void to_json(nlohmann::ordered_json& j, const ReplayOpRecord& r);
void from_json(const nlohmann::json& j, ReplayOpRecord& r);
void to_json(nlohmann::ordered_json& j, const ReplayRecord& r);
void from_json(const nlohmann::json& j, ReplayRecord& r);
void to_json(nlohmann::ordered_json& j, const ReplayVerdict& v);
void from_json(const nlohmann::json& j, ReplayVerdict& v);
// The whole document ("schema": commbench/replay/v1).
nlohmann::ordered_json replay_document(const ReplayReport& report);
// Reads a replay document back; a usage Error naming `where` when it is not one.
ReplayReport parse_replay_document(const std::string& text, const std::string& where);

}  // namespace cb
