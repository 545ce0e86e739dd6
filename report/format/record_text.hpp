// What the human-facing writers (table, Markdown) show alike: bandwidth figures, the run's
// libraries and size, and the order collectives appear in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/record.hpp"

namespace cb {

// "12.34" (GB/s, two decimals), or "-" where there is none (barrier).
std::string format_bandwidth(const std::optional<double>& gbps);
// "1.78" (a ratio, two decimals), or "-" where there is none.
std::string format_factor(const std::optional<double>& ratio);
// "mpi: Open MPI 4.1.4, gloo: ..." or "no backend".
std::string libraries_text(const RunMeta& meta);
// "3 ranks on 1 node".
std::string ranks_text(const RunMeta& meta);
// The collective as tables and charts head it: its name, and for alltoallv its split
// ("alltoallv zipf:1.2"), each split a block of its own.
std::string collective_label(const ResultRecord& r);
// Collective labels in order of first appearance.
std::vector<std::string> collective_order(const std::vector<ResultRecord>& records);

}  // namespace cb
