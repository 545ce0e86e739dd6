// `commbench probe membw|copy|links`: measured bandwidth matrices.
#include <fmt/format.h>

#include <algorithm>

#include "cmd/document_output.hpp"
#include "collectives/catalogue/names.hpp"
#include "cmd/subcommands.hpp"
#include "collectives/launch/process_start.hpp"
#include "collectives/launch/start.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "probes/gpu_copy_report.hpp"
#include "probes/links.hpp"
#include "probes/membw.hpp"

namespace cb {

namespace {

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
};

int positive(const std::string& text, const char* what) {
  std::int64_t v = parse_int(text, what);
  if (v <= 0 || v > 1000000)
    usage_error("invalid {} '{}': expected a positive integer", what, text);
  return static_cast<int>(v);
}

double parse_fraction(const std::string& text) {
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !(v > 0 && v <= 1))
    usage_error("invalid --min-fraction '{}': expected a number in (0, 1], e.g. 0.8", text);
  return v;
}

std::vector<MemKernel> parse_mem_kernels(const std::string& text) {
  const std::vector<MemKernel> all = {MemKernel::Read, MemKernel::Write, MemKernel::Copy,
                                      MemKernel::Memcpy};
  if (text == "all") return all;
  std::vector<MemKernel> out;
  for (const auto& name : split_list(text)) {
    auto it =
        std::find_if(all.begin(), all.end(), [&](MemKernel k) { return kernel_name(k) == name; });
    if (it == all.end())
      usage_error("unknown kernel '{}': expected read, write, copy, memcpy or all", name);
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
  }
  if (out.empty()) usage_error("empty --kernels list: expected read, write, copy, memcpy or all");
  return out;
}

int run_membw(const ProbeRequest& rq) {
  check_document_output(rq.out);
  MembwOptions o;
  if (!rq.size.empty()) o.bytes = parse_size(rq.size, "--size");
  if (o.bytes < (16u << 10)) usage_error("invalid --size '{}': expected at least 16K", rq.size);
  o.repeats = positive(rq.repeats, "--repeats");
  if (!rq.threads.empty()) o.threads = positive(rq.threads, "--threads");
  o.kernels = parse_mem_kernels(rq.kernels);
  MembwResult r = measure_membw(o);
  emit_document(rq.out, membw_to_json(r), [&](std::ostream& os) { print_membw(r, os); });
  return 0;
}

int run_copy(const ProbeRequest& rq) {
  check_document_output(rq.out);
  GpuCopyOptions o;
  if (!rq.size.empty()) o.bytes = parse_size(rq.size, "--size");
  if (o.bytes == 0) usage_error("invalid --size '{}': expected a positive size", rq.size);
  o.repeats = positive(rq.repeats, "--repeats");
  o.host = o.device = o.peer = false;
  for (const auto& t : split_list(rq.tests)) {
    if (t == "h2d" || t == "d2h") {
      o.host = true;
    } else if (t == "d2d") {
      o.device = true;
    } else if (t == "p2p") {
      o.peer = true;
    } else {
      usage_error("unknown copy test '{}': expected h2d, d2h, d2d or p2p", t);
    }
  }
  GpuCopyResult r = measure_gpu_copy(o);
  emit_document(rq.out, gpu_copy_to_json(r, o),
                [&](std::ostream& os) { print_gpu_copy(r, o, os); });
  return 0;
}

// The control channel's rendezvous and operation timeout, as `run`'s default --timeout.
constexpr double kLinksTimeoutSeconds = 300;

int run_links(const ProbeRequest& rq) {
  check_document_output(rq.out);
  LinksOptions o;
  if (!rq.size.empty()) o.bytes = parse_size(rq.size, "--size");
  o.repeats = positive(rq.repeats, "--repeats");
  o.window = positive(rq.window, "--window");
  o.latency_iters = positive(rq.latency_iters, "--latency-iters");
  if (rq.per_host && rq.all_ranks)
    usage_error("--per-host and --all-ranks exclude each other: pick one");
  o.per_host = rq.per_host ? PerHost::Yes : rq.all_ranks ? PerHost::No : PerHost::Auto;
  if (!rq.sample.empty()) o.sample = positive(rq.sample, "--sample");
  o.min_fraction = parse_fraction(rq.min_fraction);
  o.sample_time = parse_double(rq.sample_time, "--sample-time");
  o.per_nic = rq.per_nic;
  o.nics = split_list(rq.nics);
  check_links_options(o);
  // Checked before the control channel starts: a lone process would become an MPI singleton.
  const LaunchInfo launch = detect_launch();
  check_launch(launch, kLinksTimeoutSeconds);
  check_links_ranks(launch.size);
  std::unique_ptr<Control> control = make_run_control(launch, kLinksTimeoutSeconds);
  LinksResult r = measure_links(o, *control);
  if (control->rank() == 0)
    emit_document(rq.out, links_to_json(r), [&](std::ostream& os) { print_links(r, os); });
  return 0;
}

}  // namespace

void register_probe(CLI::App& app, Action& action) {
  CLI::App* probe =
      app.add_subcommand("probe", "measured bandwidth: membw, copy (GPU), links (MPI rank pairs)");
  probe->require_subcommand(1);

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
  m->callback([mem, &action] { action = [mem] { return run_membw(*mem); }; });

  auto copy = std::make_shared<ProbeRequest>();
  CLI::App* c = probe->add_subcommand(
      "copy", "GPU copy bandwidth: H2D, D2H (pinned, pageable), D2D, P2P matrix");
  add_document_options(c, copy->out);
  c->add_option("--size", copy->size, "bytes per copy (default 256M)");
  c->add_option("--repeats", copy->repeats, "timed repeats; the median is reported (default 5)");
  c->add_option("--tests", copy->tests, "h2d, d2h, d2d, p2p (default all)");
  c->callback([copy, &action] { action = [copy] { return run_copy(*copy); }; });

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
  l->callback([links, &action] { action = [links] { return run_links(*links); }; });
}

}  // namespace cb
