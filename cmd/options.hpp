// Parsing of option values shared by subcommands; every failure is a usage Error naming the
// value and what is accepted.
#pragma once

#include <string>
#include <vector>

#include "collectives/catalogue.hpp"
#include "collectives/dtype.hpp"
#include "common/host_name.hpp"

namespace cb {

std::vector<std::string> split_list(const std::string& text);        // "a,b, c" -> {a, b, c}
std::vector<Collective> parse_collectives(const std::string& text);  // "all" or names
std::vector<DType> parse_dtypes(const std::string& text);            // "all" or names
std::vector<ReduceOp> parse_ops(const std::string& text);            // "all" or names
std::vector<Placement> parse_placement(const std::string& text);     // out, in, both
// "N" or "all"; sets all_roots for "all".
int parse_root(const std::string& text, bool& all_roots);
// The original command line, shell-quoted where needed.
std::string command_line(int argc, char** argv);
// The command line of this process, as recorded by main().
void set_invocation(std::string line);
const std::string& invocation();
std::string utc_now_iso8601();

}  // namespace cb
