// --format and --output of the subcommands that print one document (topo, probe), as rows of
// their flag tables.
#pragma once

#include <string>

#include "app/flags.hpp"
#include "report/format/document_output.hpp"
#include "report/format/report_format.hpp"

namespace cb {

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

}  // namespace cb
