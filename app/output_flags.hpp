// --format and --output as rows of a subcommand's flag table, their help listing the formats of
// the table of writers the subcommand writes with: a report's (compare, check) or a document's
// (topo, probe).
#pragma once

#include <string>

#include "app/flags.hpp"
#include "report/format/document_output.hpp"
#include "report/format/report_format.hpp"

namespace cb {

// A report written by `writers` (kCompareFormats, kCheckFormats): --format for stdout and
// --output FILE, filling `format` and `output`.
template <class Request, class Row>
Flags<Request> report_flags(std::string Request::*format, std::string Request::*output,
                            const FormatRows<Row>& writers) {
  return {value_flag("--format", format,
                     "stdout format: " + listed(writers.names()) + " (default table)"),
          value_flag("--output", output,
                     "also write the report to FILE (" + listed(writers.extensions(), " ") + ")")};
}

// One document (topo, probe): --format and --output filling `out`.
template <class Request>
Flags<Request> document_flags(DocumentOutput Request::*out) {
  Flag<Request> format;
  format.names = "--format";
  format.help = "stdout format: " + listed(document_formats(), " or ") + " (default table)";
  format.text = [out](Request& r) -> std::string& { return (r.*out).format; };
  Flag<Request> output;
  output.names = "--output";
  output.help = "also write FILE (" + listed(document_extensions(), " ") + ")";
  output.text = [out](Request& r) -> std::string& { return (r.*out).output; };
  return {format, output};
}

// `rows` followed by `more`.
template <class Request>
Flags<Request> and_then(Flags<Request> rows, const Flags<Request>& more) {
  rows.insert(rows.end(), more.begin(), more.end());
  return rows;
}

}  // namespace cb
