// `probe links`' transport, and its per-NIC passes as fresh jobs (--launch): one job per NIC or
// HCA with the environment that pins it there, the jobs' documents merged into one result whose
// verdict compares the rails.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "common/environment.hpp"
#include "probes/links.hpp"
#include "probes/links_transport.hpp"

namespace cb {

struct TransportFacts {
  bool nccl_built = false;    // this build has the NCCL transport (CUDA)
  bool relaunch = false;      // --launch: every pass runs as a fresh job of fresh ranks
  int visible_gpus = 0;       // GPUs this process sees (the default's guess for the ranks)
  std::string no_gpu_reason;  // why this rank sees no GPU; empty when it sees one
};

// `requested` is --transport ("" when not given: the control channel without per-NIC passes;
// per NIC, nccl with --launch where this build has NCCL and this host sees a GPU, else tcp).
// Usage errors: an unknown name; nccl in a build without CUDA; nccl in a rank that sees no GPU
// (checked by the ranks, not by a --launch parent, which may run where no GPU is).
LinksTransport choose_links_transport(const std::string& requested, bool per_nic,
                                      const TransportFacts& facts);

// The environment that pins a pass to `nic`. NCCL: NCCL_IB_HCA with NCCL's '=' prefix, so the
// name matches exactly (a bare "mlx5_1" is a prefix and also takes mlx5_10..19), and no ':port'
// (every active port of that HCA); NCCL_IB_DISABLE=0 (the pass is about IB, whatever the site's
// default). TCP: nothing (the pass binds to the NIC's address itself).
EnvList pass_environment(LinksTransport t, const std::string& nic);

struct LinksPass {
  int rail = 0;
  std::string nic;
  EnvList env;
  std::vector<std::string> args;  // commbench's arguments for the pass's job
};

// One pass per rail, in order: `args` (the probe's own options) plus the transport and the one
// NIC, with pass_environment().
std::vector<LinksPass> plan_links_passes(LinksTransport t, const std::vector<std::string>& rails,
                                         const std::vector<std::string>& args);

// The passes' `commbench/links/v2` documents (docs[k] measured rails[k] alone) as one result: the
// pairs labelled with their NIC and rail k, the rounds and hosts of the first, the confirmations
// and seconds summed, and the verdict over every rail. Throws a runtime Error on a document
// that is not one.
LinksResult merge_links_passes(const std::vector<nlohmann::json>& docs,
                               const std::vector<std::string>& rails, const LinksOptions& o);

}  // namespace cb
