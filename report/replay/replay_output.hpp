// replay's report in each format that has a writer for it (its writers' table, kReplayWriters):
// the table for people (verdict lines first, then per setting the one-line answer, the step's
// figures, and each collective), CSV (a `step` row per setting and an `op` row per collective)
// and JSON (docs/replay.md, "Output").
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "common/replay_record.hpp"
#include "report/format/report_format.hpp"

namespace cb {

void write_replay_table(const ReplayReport& report, std::ostream& out);
void write_replay_csv(const ReplayReport& report, std::ostream& out);
void write_replay_json(const ReplayReport& report, std::ostream& out);

// replay's writers by format name (rows of kOutputFormats, report/format/report_format.hpp).
struct ReplayWriter {
  std::string_view format;
  void (*write)(const ReplayReport&, std::ostream&);
};
// clang-format off
inline constexpr ReplayWriter kReplayWriters[] = {
//   format   write
    {"table", write_replay_table},
    {"csv",   write_replay_csv},
    {"json",  write_replay_json},
};
// clang-format on
inline constexpr FormatRows<ReplayWriter> kReplayFormats{kReplayWriters};

// "gpt2 on 2 ranks (mpi, cap 25 MiB): 20 buckets, 60.1 ms of allreduce, 30.2 ms of it exposed
// behind a 120 ms backward": a setting's figures as an answer.
std::string replay_answer(const ReplayRecord& r);

// The CSV header (contract order).
const std::vector<std::string>& replay_csv_columns();

}  // namespace cb
