// `commbench probe membw|copy|links`: measured bandwidth matrices.
#include <memory>

#include "app/probe.hpp"
#include "cmd/document_output.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

namespace {

void register_membw(CLI::App* probe, Action& action) {
  auto mem = std::make_shared<ProbeRequest>();
  CLI::App* m =
      probe->add_subcommand("membw", "memory bandwidth matrix, CPU NUMA node x memory node");
  add_document_options(m, mem->out);
  m->add_option("--size", mem->size, "bytes per buffer (default 256M; copy uses two)");
  m->add_option("--repeats", mem->repeats,
                "timed repeats per cell; the median is reported (default 5)");
  m->add_option("--threads", mem->threads,
                "threads per CPU node (default one per CPU of the node)");
  m->add_option("--kernels", mem->kernels,
                "read, write, copy, memcpy, or all (default read,write,copy)");
  m->callback([mem, &action] { action = [mem] { return probe_membw(*mem); }; });
}

void register_copy(CLI::App* probe, Action& action) {
  auto copy = std::make_shared<ProbeRequest>();
  CLI::App* c = probe->add_subcommand(
      "copy", "GPU copy bandwidth: H2D, D2H (pinned, pageable), D2D, P2P matrix");
  add_document_options(c, copy->out);
  c->add_option("--size", copy->size, "bytes per copy (default 256M)");
  c->add_option("--repeats", copy->repeats, "timed repeats; the median is reported (default 5)");
  c->add_option("--tests", copy->tests, "h2d, d2h, d2d, p2p (default all)");
  c->callback([copy, &action] { action = [copy] { return probe_copy(*copy); }; });
}

void register_links(CLI::App* probe, Action& action) {
  auto links = std::make_shared<ProbeRequest>();
  CLI::App* l = probe->add_subcommand(
      "links",
      "bandwidth and latency between hosts or ranks over MPI, with a straggler verdict (run "
      "under mpirun or srun)");
  add_document_options(l, links->out);
  l->add_option("--size", links->size, "bytes per message (default 4M)");
  l->add_option("--window", links->window, "messages in flight per round (default 16)");
  l->add_option("--repeats", links->repeats,
                "samples per direction and pair; the best is reported (default 5)");
  l->add_option("--latency-iters", links->latency_iters,
                "8-byte round trips per latency sample (default 200)");
  l->add_flag("--per-host", links->per_host,
              "one rank per host (the default when a host has several ranks)");
  l->add_flag("--all-ranks", links->all_ranks, "every rank, also several per host");
  l->add_option("--sample", links->sample,
                "measure only K random partners per host or rank (default: all, n-1 rounds)");
  l->add_option("--min-fraction", links->min_fraction,
                "straggler threshold: fraction of the median bandwidth (default 0.8)");
  l->add_option("--sample-time", links->sample_time,
                "seconds one sample sends for at most (default 0.05): a slow link is measured "
                "from what it moved by then");
  l->add_flag("--per-nic", links->per_nic,
              "one tournament per NIC every host has (rails), over TCP from that NIC's address");
  l->add_option("--nics", links->nics, "one tournament per NIC of this list (implies --per-nic)");
  l->add_option("--transport", links->transport,
                "per NIC: tcp (from each NIC's address) or nccl (NCCL send/recv, NCCL_IB_HCA one "
                "HCA per pass; implies --per-nic)");
  l->add_option("--launch", links->launch,
                "run outside mpirun/srun: each per-NIC pass as a fresh job under this launcher "
                "prefix (implies --per-nic)");
  l->callback([links, &action] { action = [links] { return probe_links(*links); }; });
}

}  // namespace

void register_probe(CLI::App& app, Action& action) {
  CLI::App* probe =
      app.add_subcommand("probe", "measured bandwidth: membw, copy (GPU), links (MPI rank pairs)");
  probe->require_subcommand(1);
  register_membw(probe, action);
  register_copy(probe, action);
  register_links(probe, action);
}

}  // namespace cb
