// Reading result files back: whatever `run --output` writes (.json, .jsonl, .csv), for compare,
// check and plot. Every problem is a usage Error naming the file and, where it helps, the line.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/record.hpp"

namespace cb {

struct ResultFile {
  std::string path;
  std::string format;           // "json", "jsonl" or "csv"
  std::optional<RunMeta> meta;  // only JSON documents carry run metadata
  nlohmann::json meta_json;     // the raw meta object (null when absent)
  std::vector<ResultRecord> records;
  // A .jsonl whose run failed after writing these records says so in a last line (writer.hpp,
  // kIncompleteKey): where it stands, the run's exit code and why it failed. Empty when whole.
  std::string incomplete;
};

// Reads and validates one result file; the format comes from the extension, else the content.
ResultFile read_result_file(const std::string& path);

// The same from text already in memory; `path` is only used to pick the format and in messages.
ResultFile parse_result_text(std::string_view text, const std::string& path);

// Throws a usage Error naming the file, where it is marked and why its run failed when `file`
// is marked incomplete: a verdict over it would judge part of a run as the whole. `what` names
// the subcommand that refuses it.
void require_complete(const ResultFile& file, std::string_view what);

// `path` itself, or for a directory (a history of earlier runs) the result files in it (.json,
// .jsonl, .csv; not .gbench.json), sorted by name. Throws a usage Error for a directory without
// any.
std::vector<std::string> result_paths(const std::string& path);

// A short label for a file in tables and legends: its name without directory and extension.
std::string file_label(const std::string& path);

}  // namespace cb
