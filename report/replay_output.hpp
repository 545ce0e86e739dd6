// replay's report in each format that has a writer for it (report_format.hpp, column `replay`):
// the table for people (verdict lines first, then per setting the one-line answer, the step's
// figures, and each collective), CSV (a `step` row per setting and an `op` row per collective)
// and JSON (docs/replay.md, "Output").
#pragma once

#include <iosfwd>
#include <string>

#include "common/replay_record.hpp"

namespace cb {

void write_replay_table(const ReplayReport& report, std::ostream& out);
void write_replay_csv(const ReplayReport& report, std::ostream& out);
void write_replay_json(const ReplayReport& report, std::ostream& out);

// "gpt2 on 2 ranks (mpi, cap 25 MiB): 20 buckets, 60.1 ms of allreduce, 30.2 ms of it exposed
// behind a 120 ms backward": a setting's figures as an answer.
std::string replay_answer(const ReplayRecord& r);

// The CSV header (contract order).
const std::vector<std::string>& replay_csv_columns();

}  // namespace cb
