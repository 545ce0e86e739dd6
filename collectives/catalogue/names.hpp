// Parsing of option values shared by subcommands; every failure is a usage Error naming the
// value and what is accepted.
#pragma once

#include <string>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "common/clock.hpp"
#include "common/host_name.hpp"
#include "common/invocation.hpp"

namespace cb {

std::vector<std::string> split_list(const std::string& text);        // "a,b, c" -> {a, b, c}
std::vector<Collective> parse_collectives(const std::string& text);  // "all" or names
std::vector<DType> parse_dtypes(const std::string& text);            // "all" or names
std::vector<ReduceOp> parse_ops(const std::string& text);            // "all" or names
std::vector<Placement> parse_placement(const std::string& text);     // out, in, both
// "N" or "all"; sets all_roots for "all".
int parse_root(const std::string& text, bool& all_roots);

}  // namespace cb
