// Each format's writer of a run's records, and the table that offers them by format name (a row
// of kOutputFormats each, report_format.hpp). A writer receives the run's meta once, then records
// as cases finish, then finish() once. Writers never call a backend.
#pragma once

#include <iosfwd>
#include <memory>
#include <string_view>

#include "common/record_writer.hpp"
#include "report/format/report_format.hpp"

namespace cb {

// The key of the last line of a .jsonl whose run failed after writing it: {"incomplete": true,
// "exit_code": N, "reason": "..."} (docs/output.md).
inline constexpr const char* kIncompleteKey = "incomplete";

std::unique_ptr<Writer> make_csv_writer(std::ostream& out);
std::unique_ptr<Writer> make_json_writer(std::ostream& out);
std::unique_ptr<Writer> make_jsonl_writer(std::ostream& out);
std::unique_ptr<Writer> make_table_writer(std::ostream& out);
std::unique_ptr<Writer> make_markdown_writer(std::ostream& out);
std::unique_ptr<Writer> make_gbench_writer(std::ostream& out);  // Google Benchmark JSON

struct RecordsWriter {
  std::string_view format;
  std::unique_ptr<Writer> (*make)(std::ostream&);
};

// clang-format off
inline constexpr RecordsWriter kRecordsWriters[] = {
    {"table",  make_table_writer},
    {"csv",    make_csv_writer},
    {"json",   make_json_writer},
    {"jsonl",  make_jsonl_writer},
    {"md",     make_markdown_writer},
    {"gbench", make_gbench_writer},
};
// clang-format on
inline constexpr FormatRows<RecordsWriter> kRecordsFormats{kRecordsWriters};

}  // namespace cb
