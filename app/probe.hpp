// `probe` as work: the memory bandwidth matrix, GPU copies, and the links between hosts or ranks
// (over the run's control channel), each printed as a document.
#pragma once

#include <string>

#include "app/flags.hpp"
#include "report/format/document_output.hpp"

namespace cb {

struct ProbeRequest {
  DocumentOutput out;
  std::string size;
  std::string repeats = "5";
  std::string threads;
  std::string kernels = "read,write,copy";
  std::string tests = "h2d,d2h,d2d,p2p";
  std::string window = "16";
  std::string latency_iters = "200";
  bool per_host = false;
  bool all_ranks = false;
  std::string sample;
  std::string min_fraction = "0.8";
  std::string sample_time = "0.05";
  bool per_nic = false;
  std::string nics;
  std::string transport;  // tcp|nccl; empty: chosen (see choose_links_transport)
  std::string launch;     // a launcher prefix: each per-NIC pass as a fresh job under it
};

// Each probe's flags.
const Flags<ProbeRequest>& membw_flags();
const Flags<ProbeRequest>& copy_flags();
const Flags<ProbeRequest>& links_flags();

int probe_membw(const ProbeRequest& rq);
int probe_copy(const ProbeRequest& rq);
// Under an MPI launcher (or srun, or env://): every rank measures, rank 0 prints. With --launch,
// outside any launcher: one fresh job per NIC or HCA under that prefix, merged.
int probe_links(const ProbeRequest& rq);

}  // namespace cb
