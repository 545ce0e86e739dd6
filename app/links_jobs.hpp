// `probe links --launch 'PREFIX'`: each per-NIC pass as a fresh job of fresh ranks under the
// user's launcher, with the environment that pins it to its NIC or HCA (NCCL reads NCCL_IB_HCA
// once per process), the passes' documents merged into one result.
#pragma once

#include <string>
#include <vector>

#include "probes/links.hpp"
#include "report/format/document_output.hpp"

namespace cb {

// `launch` is the launcher prefix, `out` where the merged document goes; `o` is checked and its
// transport chosen; `args` are the probe's own options for every pass. Returns the exit code
// (0); a pass that fails ends the probe with its job's exit code and line.
int probe_links_in_jobs(const std::string& launch, const DocumentOutput& out, const LinksOptions& o,
                        const std::vector<std::string>& args);

}  // namespace cb
