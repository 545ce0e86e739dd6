#include "app/probe.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "app/links_jobs.hpp"
#include "app/output_flags.hpp"
#include "app/run_fingerprint.hpp"
#include "collectives/catalogue/names.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "core/process_start.hpp"
#include "launch/start.hpp"
#include "probes/gpu_copy_report.hpp"
#include "probes/links.hpp"
#include "probes/links_passes.hpp"
#include "probes/membw.hpp"
#include "probes/nic_list.hpp"

namespace cb {

namespace {

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

// The probe's own options, for each pass's job (the transport and NIC are the pass's).
std::vector<std::string> pass_arguments(const ProbeRequest& rq) {
  std::vector<std::string> a = {
      "probe",          "links",         "--repeats",       rq.repeats,
      "--window",       rq.window,       "--latency-iters", rq.latency_iters,
      "--min-fraction", rq.min_fraction, "--sample-time",   rq.sample_time,
      "--format",       "json"};
  if (!rq.size.empty()) a.insert(a.end(), {"--size", rq.size});
  if (!rq.sample.empty()) a.insert(a.end(), {"--sample", rq.sample});
  return a;
}

using P = ProbeRequest;

Flags<P> with_document(std::initializer_list<Flag<P>> rows) {
  Flags<P> f = document_flags(&P::out);
  f.insert(f.end(), rows);
  return f;
}

}  // namespace

const Flags<ProbeRequest>& membw_flags() {
  static const Flags<P> flags = with_document({
      value_flag("--size", &P::size, "bytes per buffer (default 256M; copy uses two)"),
      value_flag("--repeats", &P::repeats,
                 "timed repeats per cell; the median is reported (default 5)"),
      value_flag("--threads", &P::threads,
                 "threads per CPU node (default one per CPU of the node)"),
      value_flag("--kernels", &P::kernels,
                 "read, write, copy, memcpy, or all (default read,write,copy)"),
  });
  return flags;
}

const Flags<ProbeRequest>& copy_flags() {
  static const Flags<P> flags = with_document({
      value_flag("--size", &P::size, "bytes per copy (default 256M)"),
      value_flag("--repeats", &P::repeats, "timed repeats; the median is reported (default 5)"),
      value_flag("--tests", &P::tests, "h2d, d2h, d2d, p2p (default all)"),
  });
  return flags;
}

const Flags<ProbeRequest>& links_flags() {
  static const Flags<P> flags = with_document({
      value_flag("--size", &P::size, "bytes per message (default 4M)"),
      value_flag("--window", &P::window, "messages in flight per round (default 16)"),
      value_flag("--repeats", &P::repeats,
                 "samples per direction and pair; the best is reported (default 5)"),
      value_flag("--latency-iters", &P::latency_iters,
                 "8-byte round trips per latency sample (default 200)"),
      toggle_flag("--per-host", &P::per_host,
                  "one rank per host (the default when a host has several ranks)"),
      toggle_flag("--all-ranks", &P::all_ranks, "every rank, also several per host"),
      value_flag("--sample", &P::sample,
                 "measure only K random partners per host or rank (default: all, n-1 rounds)"),
      value_flag("--min-fraction", &P::min_fraction,
                 "straggler threshold: fraction of the median bandwidth (default 0.8)"),
      value_flag("--sample-time", &P::sample_time,
                 "seconds one sample sends for at most (default 0.05): a slow link is measured "
                 "from what it moved by then"),
      toggle_flag("--per-nic", &P::per_nic,
                  "one tournament per NIC every host has (rails), over TCP from that NIC's "
                  "address"),
      value_flag("--nics", &P::nics, "one tournament per NIC of this list (implies --per-nic)"),
      value_flag("--transport", &P::transport,
                 "per NIC: tcp (from each NIC's address) or nccl (NCCL send/recv, NCCL_IB_HCA one "
                 "HCA per pass; implies --per-nic)"),
      value_flag("--launch", &P::launch,
                 "run outside mpirun/srun: each per-NIC pass as a fresh job under this launcher "
                 "prefix (implies --per-nic)"),
  });
  return flags;
}

int probe_membw(const ProbeRequest& rq) {
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

int probe_copy(const ProbeRequest& rq) {
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

namespace {

// probe links' plan as every env:// rank must run it: what each pair's samples measure and
// how, the participants, the straggler threshold, the NICs, the transport as chosen here.
PlanFingerprint links_fingerprint(const LinksOptions& o) {
  PlanFingerprint f = command_fingerprint("probe links");
  f.add("--size", exact_size(o.bytes));
  f.add("--window", std::to_string(o.window));
  f.add("--repeats", std::to_string(o.repeats));
  f.add("--latency-iters", std::to_string(o.latency_iters));
  f.add("--per-host/--all-ranks", o.per_host == PerHost::Yes  ? "--per-host"
                                  : o.per_host == PerHost::No ? "--all-ranks"
                                                              : "(default)");
  f.add("--sample", o.sample > 0 ? std::to_string(o.sample) : "(every partner)");
  f.add("--min-fraction", fmt::format("{}", o.min_fraction));
  f.add("--sample-time", fmt::format("{}", o.sample_time));
  f.add("--per-nic", o.per_nic ? "on" : "off");
  std::string nics;
  for (const auto& n : o.nics) {
    if (!nics.empty()) nics += ',';
    nics += n;
  }
  f.add("--nics", nics.empty() ? "(none)" : nics);
  f.add("--transport", transport_name(o.transport));
  return f;
}

}  // namespace

int probe_links(const ProbeRequest& rq) {
  // The control channel's rendezvous and operation timeout, as `run`'s default --timeout.
  constexpr double kLinksTimeoutSeconds = 300;
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
  if (!rq.nics.empty()) o.nics = parse_nic_list(rq.nics);
  check_links_options(o);
  const LaunchInfo launch = detect_launch();
  TransportFacts facts;
  facts.nccl_built = nccl_transport_built();
  facts.relaunch = !rq.launch.empty();
  facts.visible_gpus = visible_gpu_count();
  if (rq.transport == "nccl" && !facts.relaunch) facts.no_gpu_reason = nccl_transport_unavailable();
  o.transport =
      choose_links_transport(rq.transport, o.per_nic || !o.nics.empty() || facts.relaunch, facts);
  if (facts.relaunch) {
    if (launch.kind != LaunchInfo::Kind::Single)
      usage_error(
          "probe links --launch starts a fresh job per NIC and cannot run under "
          "mpirun/srun: run commbench directly");
    return probe_links_in_jobs(rq.launch, rq.out, o, pass_arguments(rq));
  }
  // Checked before the control channel starts: a lone process would become an MPI singleton.
  check_launch(launch, kLinksTimeoutSeconds);
  check_links_ranks(launch.size);
  std::unique_ptr<Control> control =
      make_run_control(launch, kLinksTimeoutSeconds, links_fingerprint(o));
  LinksResult r = measure_links(o, *control);
  if (control->rank() == 0)
    emit_document(rq.out, links_to_json(r), [&](std::ostream& os) { print_links(r, os); });
  return 0;
}

}  // namespace cb
