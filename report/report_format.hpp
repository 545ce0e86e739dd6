// Every output format, one row each: its --format name, the --output extension that selects it,
// and the writer it has for each kind of document (null where it has none). Adding a format is
// its writers and one row; no format name is compared anywhere else.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "report/check_output.hpp"
#include "report/compare_output.hpp"
#include "report/replay_output.hpp"
#include "report/writer.hpp"

namespace cb {

// topo's and probe's documents: the JSON, or `print_tables` for people.
using DocumentWriter = void (*)(const nlohmann::json& doc,
                                const std::function<void(std::ostream&)>& print_tables,
                                std::ostream& out);

struct OutputFormat {
  std::string_view name;
  std::string_view extension;
  bool streamed;  // written record by record as cases finish (else whole at the end)
  std::unique_ptr<Writer> (*results)(std::ostream&);     // run's and tune's records
  void (*compare)(const CompareReport&, std::ostream&);  // compare's report
  bool records_only;  // holds records but no verdict line: compare puts that on stderr
  void (*check)(const CheckReport&, std::ostream&);  // check's report
  DocumentWriter document;                           // topo, probe
  void (*replay)(const ReplayReport&, std::ostream&);  // replay's report
};

void write_document_json(const nlohmann::json& doc, const std::function<void(std::ostream&)>&,
                         std::ostream& out);
void write_document_tables(const nlohmann::json&,
                           const std::function<void(std::ostream&)>& print_tables,
                           std::ostream& out);

// clang-format off
inline constexpr OutputFormat kOutputFormats[] = {
//   name      extension       streamed results               compare              records check              document               replay
    {"table",  ".txt",         false,   make_table_writer,    write_compare_table, false,  write_check_table, write_document_tables, write_replay_table},
    {"csv",    ".csv",         false,   make_csv_writer,      write_compare_csv,   true,   nullptr,           nullptr,               write_replay_csv},
    {"json",   ".json",        false,   make_json_writer,     write_compare_json,  false,  write_check_json,  write_document_json,   write_replay_json},
    {"jsonl",  ".jsonl",       true,    make_jsonl_writer,    nullptr,             false,  nullptr,           nullptr,               nullptr},
    {"md",     ".md",          false,   make_markdown_writer, write_compare_md,    false,  write_check_md,    nullptr,               nullptr},
    {"gbench", ".gbench.json", false,   make_gbench_writer,   nullptr,             false,  nullptr,           nullptr,               nullptr},
};
// clang-format on

// What a subcommand writes, so that it is offered the formats that have a writer for it.
enum class Writes { Results, Compare, Check, Document, Replay };
bool writes(const OutputFormat& f, Writes what);

// The names of the formats that write `what`, in table order.
std::vector<std::string> format_names(Writes what);
// The format called `name` that writes `what`, or null.
const OutputFormat* find_format_named(std::string_view name, Writes what);
// The format called `name` that writes `what`; else a usage Error naming the accepted ones.
const OutputFormat& format_named(std::string_view name, Writes what,
                                 std::string_view option = "--format");
// The format of an output path by its longest matching extension among those that write
// `what`, or null.
const OutputFormat* find_format_for_path(const std::string& path, Writes what);
// As find_format_for_path; else a usage Error naming the accepted extensions.
const OutputFormat& format_for_path(const std::string& path, Writes what);
// The extensions of the formats that write `what`, in table order.
std::vector<std::string> format_extensions(Writes what);

// Fails fast, before any work, when the directory of an output path does not exist or the path
// cannot be written (see check_output_file; `streamed` outputs are written in place).
void check_output_directory(const std::string& path, bool streamed = false);

}  // namespace cb
