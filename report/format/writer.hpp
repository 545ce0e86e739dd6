// Choosing a run's record writer (writers.hpp) by --format name for stdout or by --output
// extension for a file, and checking those choices before any work.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/csv.hpp"
#include "common/record.hpp"
#include "common/record_writer.hpp"
#include "report/format/writers.hpp"

namespace cb {

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

}  // namespace cb
