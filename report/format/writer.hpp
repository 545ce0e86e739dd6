// Result writers. A format is a writer: it receives the run's meta once, then records as cases
// finish, then finish() once. Writers never call a backend.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/csv.hpp"
#include "common/record.hpp"
#include "common/record_writer.hpp"

namespace cb {

// The key of the last line of a .jsonl whose run failed after writing it: {"incomplete": true,
// "exit_code": N, "reason": "..."} (docs/output.md).
inline constexpr const char* kIncompleteKey = "incomplete";

// Formats accepted by --format (stdout).
std::vector<std::string> stdout_formats();
// A writer of `format` to an already-open stream (stdout). Throws a usage Error on unknown names.
std::unique_ptr<Writer> make_stream_writer(std::string_view format, std::ostream& out);
// A writer of `format` to standard output whose every write is checked (exit 1 naming the OS
// error when stdout cannot take it). Throws a usage Error on unknown names.
std::unique_ptr<Writer> make_stdout_writer(std::string_view format);
// A writer for --output PATH, format from the extension. Throws a usage Error naming the
// accepted extensions; the file appears only when the writer finishes (.jsonl streams instead,
// created with its first record, or at finish() when the run wrote none).
std::unique_ptr<Writer> make_file_writer(const std::string& path);
// Checked before any work starts so bad --output values fail fast.
void check_output_path(const std::string& path);
// Whether an --output PATH is written record by record as cases finish (else at the end).
bool is_streamed_output(const std::string& path);

// Appends the incomplete mark to a .jsonl that a failed run wrote part of (a line end first when
// the last record was cut). Errors are ignored: the run's own exit code says it failed.
void mark_jsonl_incomplete(const std::string& path, int exit_code, const std::string& reason);

// Individual writers, exposed for tests and other subcommands.
std::unique_ptr<Writer> make_csv_writer(std::ostream& out);
std::unique_ptr<Writer> make_json_writer(std::ostream& out);
std::unique_ptr<Writer> make_jsonl_writer(std::ostream& out);
std::unique_ptr<Writer> make_table_writer(std::ostream& out);
std::unique_ptr<Writer> make_markdown_writer(std::ostream& out);
std::unique_ptr<Writer> make_gbench_writer(std::ostream& out);  // Google Benchmark JSON

}  // namespace cb
