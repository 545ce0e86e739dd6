// `probe links --launch 'PREFIX'`: each per-NIC pass as a fresh job of fresh ranks under the
// user's launcher, with the environment that pins it to its NIC or HCA (NCCL reads NCCL_IB_HCA
// once per process), the passes' documents merged into one result.
#pragma once

#include <string>

#include "app/probe.hpp"
#include "probes/links.hpp"

namespace cb {

// `o` is checked and its transport chosen; `args` are the probe's own options for every pass.
// Returns the exit code (0); a pass that fails ends the probe with its job's exit code and line.
int probe_links_in_jobs(const ProbeRequest& rq, const LinksOptions& o,
                        const std::vector<std::string>& args);

}  // namespace cb
