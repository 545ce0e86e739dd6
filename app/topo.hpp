// `topo` as work: this host's topology from /sys or a captured tree; under a launcher, the first
// rank on each host probes and rank 0 reports every host (commbench/cluster-topology/v1).
#pragma once

#include <string>

#include "app/flags.hpp"
#include "report/format/document_output.hpp"

namespace cb {

struct TopoRequest {
  DocumentOutput out;
  std::string sysfs_root = "/sys";
  std::string capture;
};

const Flags<TopoRequest>& topo_flags();

int topo(const TopoRequest& rq);

}  // namespace cb
