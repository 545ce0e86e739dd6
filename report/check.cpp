#include "report/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>

#include "common/error.hpp"
#include "common/units.hpp"
#include "report/cluster_topology.hpp"
#include "report/compare.hpp"
#include "report/links_verdict.hpp"
#include "report/repetitions.hpp"

namespace cb {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxDetails = 10;

struct Sourced {
  const ResultRecord* record;
  const std::string* file;
};

// "64 KiB (mpi/default float sum out, 2 ranks, run1)": the requirement already names the
// collective.
std::string where(const Sourced& s) {
  const ResultRecord& r = *s.record;
  std::string size = r.collective == "barrier" ? "barrier" : format_size(r.bytes);
  return fmt::format("{} ({}/{} {} {} {}{}, {} ranks, {})", size, r.backend, r.algorithm, r.dtype,
                     r.op, r.placement, r.root >= 0 ? fmt::format(" root {}", r.root) : "",
                     r.nranks, file_label(*s.file));
}

bool matches(const ResultRequirement& q, const ResultRecord& r) {
  auto same = [](const std::optional<std::string>& want, const std::string& have) {
    return !want || *want == have;
  };
  return q.collective == r.collective && same(q.backend, r.backend) &&
         same(q.algorithm, r.algorithm) && same(q.env, r.env) && same(q.dtype, r.dtype) &&
         same(q.op, r.op) && same(q.placement, r.placement) &&
         (!q.nranks || *q.nranks == r.nranks) && r.bytes >= q.min_bytes && r.bytes <= q.max_bytes;
}

std::string filters(const ResultRequirement& q) {
  std::string s = "collective=" + q.collective;
  auto add = [&](const char* k, const std::optional<std::string>& v) {
    if (v) s += fmt::format(", {}={}", k, *v);
  };
  add("backend", q.backend);
  add("algorithm", q.algorithm);
  add("env", q.env);
  add("dtype", q.dtype);
  add("op", q.op);
  add("placement", q.placement);
  if (q.nranks) s += fmt::format(", nranks={}", *q.nranks);
  if (q.min_bytes > 0) s += ", min_bytes=" + format_size(q.min_bytes);
  if (q.max_bytes != std::numeric_limits<std::uint64_t>::max()) {
    s += ", max_bytes=" + format_size(q.max_bytes);
  }
  return s;
}

void add_detail(RequirementResult& out, std::string line) {
  if (out.details.size() >= kMaxDetails) return;
  if (std::find(out.details.begin(), out.details.end(), line) == out.details.end()) {
    out.details.push_back(std::move(line));
  }
}

// One limit on one figure of every matched record: the worst value goes into `measured`, every
// shortfall into the details. A record without the figure (barrier busbw) cannot meet the limit.
struct Limit {
  const char* what;  // "busbw", "time", "p99"
  bool at_least;     // true: value >= bound
  double bound;
  std::string (*format)(double);
  std::optional<double> (*figure)(const ResultRecord&);
};

std::string gbps(double v) {
  return fmt::format("{:.3g} GB/s", v);
}

std::string bound_text(const Limit& l) {
  return fmt::format("{} {} {}", l.what, l.at_least ? ">=" : "<=", l.format(l.bound));
}

std::vector<Limit> limits_of(const ResultRequirement& q) {
  std::vector<Limit> out;
  if (q.min_busbw_GBps) {
    out.push_back({"busbw", true, *q.min_busbw_GBps, gbps,
                   [](const ResultRecord& r) { return r.busbw_GBps; }});
  }
  if (q.max_time_us) {
    out.push_back({"time", false, *q.max_time_us, format_time_us,
                   [](const ResultRecord& r) { return std::optional<double>(r.time_us); }});
  }
  if (q.max_p99_us) {
    out.push_back({"p99", false, *q.max_p99_us, format_time_us,
                   [](const ResultRecord& r) { return std::optional<double>(r.p99_us); }});
  }
  return out;
}

std::size_t apply(const Limit& limit, const std::vector<Sourced>& matched, RequirementResult& out,
                  std::vector<std::string>& measured) {
  std::size_t shortfalls = 0;
  std::optional<double> worst;
  const Sourced* worst_at = nullptr;
  for (const auto& s : matched) {
    std::optional<double> v = limit.figure(*s.record);
    if (!v) {
      ++shortfalls;
      add_detail(out, fmt::format("no {} at {}", limit.what, where(s)));
      continue;
    }
    if (limit.at_least ? *v < limit.bound : *v > limit.bound) {
      ++shortfalls;
      add_detail(out, fmt::format("{} {} at {}", limit.what, limit.format(*v), where(s)));
    }
    if (!worst || (limit.at_least ? *v < *worst : *v > *worst)) {
      worst = v;
      worst_at = &s;
    }
  }
  measured.push_back(
      worst ? fmt::format("worst {} {} at {}", limit.what, limit.format(*worst), where(*worst_at))
            : fmt::format("no {}", limit.what));
  return shortfalls;
}

RequirementResult evaluate(const ResultRequirement& q, const std::vector<ResultFile>& files) {
  RequirementResult out;
  out.name = q.name;
  out.kind = "results";
  out.line = q.line;
  out.severity = q.severity;
  std::vector<Limit> limits = limits_of(q);
  for (const auto& l : limits) out.expected += (out.expected.empty() ? "" : "; ") + bound_text(l);
  // Each measurement of a file judged on its median over repetitions (`run --repeat` summaries,
  // or one record per repetition in a .jsonl).
  std::deque<ResultRecord> medians;
  std::vector<Sourced> matched;
  std::size_t fewest = 0, most = 0;
  for (const auto& f : files) {
    std::map<RecordKey, std::vector<ResultRecord>> groups;
    std::vector<RecordKey> order;
    for (const auto& r : f.records) {
      if (!matches(q, r)) continue;
      auto& g = groups[key_of(r)];
      if (g.empty()) order.push_back(key_of(r));
      for (auto& launch : launches_of(r)) g.push_back(std::move(launch));
    }
    for (const auto& k : order) {
      const auto& g = groups[k];
      medians.push_back(g.size() == 1 ? g.front() : summarize_repetitions(g));
      matched.push_back({&medians.back(), &f.path});
      fewest = fewest == 0 ? g.size() : std::min(fewest, g.size());
      most = std::max(most, g.size());
    }
  }
  if (matched.empty()) {
    out.measured = "nothing measured";
    out.details.push_back("no result matches " + filters(q));
    return out;
  }
  std::vector<std::string> measured;
  std::size_t shortfalls = 0;
  for (const auto& l : limits) shortfalls += apply(l, matched, out, measured);
  // A result with wrong elements cannot pass an acceptance, whatever its speed.
  for (const auto& s : matched) {
    if (s.record->wrong && *s.record->wrong > 0) {
      ++shortfalls;
      add_detail(out, fmt::format("{} wrong elements at {}", *s.record->wrong, where(s)));
    }
  }
  measured.push_back(fmt::format("{} record{}", matched.size(), matched.size() == 1 ? "" : "s"));
  if (most > 1) {
    measured.back() += fewest == most
                           ? fmt::format(", each the median of {} repetitions", most)
                           : fmt::format(", each the median of {}-{} repetitions", fewest, most);
  }
  for (const auto& m : measured) out.measured += (out.measured.empty() ? "" : "; ") + m;
  if (shortfalls > out.details.size()) {
    out.details.push_back(fmt::format("... and {} more", shortfalls - out.details.size()));
  }
  out.passed = shortfalls == 0;
  return out;
}

// --- topology ---

const json& array_of(const json& doc, const char* key) {
  static const json kEmpty = json::array();
  auto it = doc.find(key);
  return it != doc.end() && it->is_array() ? *it : kEmpty;
}

std::optional<double> number_at(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string string_at(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// GPUs and RDMA NICs: the devices whose PCIe links carry collective traffic.
struct LinkDevice {
  std::string label;  // "GPU 0 (0000:18:00.0)" or "mlx5_0 (0000:19:00.0)"
  bool gpu = false;
  const json* link = nullptr;    // the device's own link object, or null
  const json* parent = nullptr;  // the upstream port's link object, or null
};

std::vector<LinkDevice> link_devices(const json& doc) {
  std::map<std::string, const json*> by_bdf;
  for (const auto& d : array_of(doc, "pci_devices")) {
    if (!string_at(d, "bdf").empty()) by_bdf[string_at(d, "bdf")] = &d;
  }
  auto link_of = [&](const std::string& bdf) -> const json* {
    auto it = by_bdf.find(bdf);
    if (it == by_bdf.end()) return nullptr;
    auto l = it->second->find("link");
    return l != it->second->end() && l->is_object() ? &*l : nullptr;
  };
  auto parent_of = [&](const std::string& bdf) -> const json* {
    auto it = by_bdf.find(bdf);
    return it == by_bdf.end() ? nullptr : link_of(string_at(*it->second, "parent"));
  };
  std::vector<LinkDevice> out;
  for (const auto& g : array_of(doc, "gpus")) {
    std::string bdf = string_at(g, "bdf");
    std::string index = g.contains("index") ? g["index"].dump() : "?";
    out.push_back({fmt::format("GPU {} ({})", index, bdf), true, link_of(bdf), parent_of(bdf)});
  }
  for (const auto& n : array_of(doc, "nics")) {
    if (array_of(n, "ports").empty()) continue;  // not an RDMA device
    std::string bdf = string_at(n, "bdf");
    out.push_back(
        {fmt::format("{} ({})", string_at(n, "name"), bdf), false, link_of(bdf), parent_of(bdf)});
  }
  return out;
}

struct IbPort {
  std::string label;
  std::string state;
  std::optional<double> rate;
};

std::vector<IbPort> ib_ports(const json& doc) {
  std::vector<IbPort> out;
  for (const auto& n : array_of(doc, "nics")) {
    for (const auto& p : array_of(n, "ports")) {
      if (string_at(p, "link_layer") != "InfiniBand") continue;
      std::string state = string_at(p, "state");
      if (auto colon = state.find(": "); colon != std::string::npos)
        state = state.substr(colon + 2);
      std::string port = p.contains("port") ? p["port"].dump() : "?";
      out.push_back({fmt::format("{} port {}", string_at(n, "name"), port), state,
                     number_at(p, "rate_gbps")});
    }
  }
  return out;
}

// Collects one line per key checked; a requirement passes when every key does.
class TopologyChecks {
 public:
  explicit TopologyChecks(RequirementResult& out) : out_(out) {}
  void add(bool ok, const std::string& measured, const std::string& expected) {
    measured_.push_back(measured);
    expected_.push_back(expected);
    ok_ = ok_ && ok;
  }
  void detail(std::string line) { add_detail(out_, std::move(line)); }
  void finish() {
    for (const auto& m : measured_) out_.measured += (out_.measured.empty() ? "" : "; ") + m;
    for (const auto& e : expected_) out_.expected += (out_.expected.empty() ? "" : "; ") + e;
    out_.passed = ok_;
  }

 private:
  RequirementResult& out_;
  std::vector<std::string> measured_, expected_;
  bool ok_ = true;
};

void check_pcie(const TopologyRequirement& q, const json& doc, TopologyChecks& c) {
  std::vector<LinkDevice> devices = link_devices(doc);
  if (q.pcie_min_gts) {
    double need = *q.pcie_min_gts;
    std::optional<double> worst;
    bool ok = !devices.empty();
    for (const auto& d : devices) {
      auto current = number_at(d.link ? *d.link : json(), "current_gts");
      auto max = number_at(d.link ? *d.link : json(), "max_gts");
      auto parent_max = number_at(d.parent ? *d.parent : json(), "max_gts");
      // GPUs drop to gen 1 when idle, so an idle GPU is judged by the speed its link and the
      // port above it can train at: min(device max, upstream max).
      std::optional<double> speed = current;
      if (d.gpu && max && (!current || *current < need)) {
        speed = parent_max ? std::min(*max, *parent_max) : *max;
      }
      if (!speed) {
        ok = false;
        c.detail(fmt::format("{}: PCIe link speed unknown", d.label));
        continue;
      }
      if (*speed < need) {
        ok = false;
        c.detail(fmt::format("{}: {:g} GT/s{}", d.label, *speed,
                             d.gpu && current ? fmt::format(" (now {:g})", *current) : ""));
      }
      if (!worst || *speed < *worst) worst = *speed;
    }
    if (devices.empty()) c.detail("no GPU or RDMA NIC with a PCIe link to check");
    c.add(ok, worst ? fmt::format("slowest link {:g} GT/s", *worst) : "pcie speed unknown",
          fmt::format("pcie >= {:g} GT/s", need));
  }
  if (q.pcie_min_width) {
    int need = *q.pcie_min_width;
    std::optional<double> worst;
    bool ok = !devices.empty();
    for (const auto& d : devices) {
      auto width = number_at(d.link ? *d.link : json(), "current_width");
      if (!width) {
        ok = false;
        c.detail(fmt::format("{}: PCIe link width unknown", d.label));
        continue;
      }
      if (*width < need) {
        ok = false;
        c.detail(fmt::format("{}: x{:g}", d.label, *width));
      }
      if (!worst || *width < *worst) worst = *width;
    }
    if (devices.empty()) c.detail("no GPU or RDMA NIC with a PCIe link to check");
    c.add(ok, worst ? fmt::format("narrowest link x{:g}", *worst) : "pcie width unknown",
          fmt::format("pcie width >= x{}", need));
  }
}

// Every GPU has all its NVLinks up: as many as NVML says it has (nvlinks_total) where known, else
// as many as the best-connected GPU, and at least one.
void check_nvlink(const json& doc, TopologyChecks& c) {
  const json& gpus = array_of(doc, "gpus");
  std::optional<double> most;
  for (const auto& g : gpus) {
    auto up = number_at(g, "nvlinks_up");
    if (up && (!most || *up > *most)) most = *up;
  }
  bool ok = !gpus.empty() && most && *most > 0;
  std::optional<double> fewest;
  for (const auto& g : gpus) {
    auto up = number_at(g, "nvlinks_up");
    std::string label = fmt::format("GPU {} ({})", g.contains("index") ? g["index"].dump() : "?",
                                    string_at(g, "bdf"));
    if (!up) {
      ok = false;
      c.detail(label + ": NVLink state unknown");
      continue;
    }
    double expected = number_at(g, "nvlinks_total").value_or(most.value_or(0));
    if (*up < expected) {
      ok = false;
      c.detail(fmt::format("{}: {:g} of {:g} NVLinks up", label, *up, expected));
    }
    if (!fewest || *up < *fewest) fewest = *up;
  }
  if (gpus.empty()) c.detail("no GPUs");
  if (!gpus.empty() && (!most || *most == 0)) c.detail("no GPU has an NVLink up");
  c.add(ok,
        fewest ? fmt::format("NVLinks up per GPU {:g}..{:g}", *fewest, most.value_or(0))
               : std::string("no NVLink data"),
        "every GPU with all NVLinks up");
}

void check_ib(const TopologyRequirement& q, const json& doc, TopologyChecks& c) {
  std::vector<IbPort> ports = ib_ports(doc);
  if (q.ib_ports) {
    c.add(static_cast<int>(ports.size()) == *q.ib_ports,
          fmt::format("{} InfiniBand port{}", ports.size(), ports.size() == 1 ? "" : "s"),
          fmt::format("ib_ports = {}", *q.ib_ports));
  }
  if (q.ib_ports_active_min_gbps) {
    double need = *q.ib_ports_active_min_gbps;
    bool ok = !ports.empty();
    std::optional<double> slowest;
    int active = 0;
    for (const auto& p : ports) {
      bool up = p.state == "ACTIVE";
      active += up;
      if (!up) {
        ok = false;
        c.detail(fmt::format("{}: state {}", p.label, p.state.empty() ? "unknown" : p.state));
      } else if (!p.rate || *p.rate < need) {
        ok = false;
        c.detail(p.rate ? fmt::format("{}: {:g} Gb/s", p.label, *p.rate)
                        : p.label + ": rate unknown");
      }
      if (p.rate && up && (!slowest || *p.rate < *slowest)) slowest = *p.rate;
    }
    if (ports.empty()) c.detail("no InfiniBand ports");
    c.add(ok,
          fmt::format("{} of {} IB ports active{}", active, ports.size(),
                      slowest ? fmt::format(", slowest {:g} Gb/s", *slowest) : ""),
          fmt::format("every IB port ACTIVE at >= {:g} Gb/s", need));
  }
}

RequirementResult evaluate_host(const TopologyRequirement& q, const json& doc) {
  RequirementResult out;
  out.name = q.name;
  out.kind = "topology";
  out.line = q.line;
  out.severity = q.severity;
  TopologyChecks c(out);
  if (q.gpus) {
    auto n = array_of(doc, "gpus").size();
    c.add(static_cast<int>(n) == *q.gpus, fmt::format("{} GPU{}", n, n == 1 ? "" : "s"),
          fmt::format("gpus = {}", *q.gpus));
  }
  if (q.numa_nodes) {
    auto n = array_of(doc, "numa_nodes").size();
    c.add(static_cast<int>(n) == *q.numa_nodes, fmt::format("{} NUMA node{}", n, n == 1 ? "" : "s"),
          fmt::format("numa_nodes = {}", *q.numa_nodes));
  }
  check_pcie(q, doc, c);
  if (q.nvlink_all_up) check_nvlink(doc, c);
  check_ib(q, doc, c);
  if (q.gdr) {
    auto g = doc.find("gdr");
    bool present = g != doc.end() && g->is_object() && g->value("present", false);
    std::string module = g != doc.end() ? string_at(*g, "module") : "";
    c.add(present,
          present ? "GPUDirect RDMA present" + (module.empty() ? "" : " (" + module + ")")
                  : std::string("no GPUDirect RDMA module"),
          "gdr present");
  }
  if (q.no_warnings) {
    const json& w = array_of(doc, "warnings");
    for (const auto& line : w)
      add_detail(out, line.is_string() ? line.get<std::string>() : line.dump());
    c.add(w.empty(), fmt::format("{} probe warning{}", w.size(), w.size() == 1 ? "" : "s"),
          "no probe warnings");
  }
  c.finish();
  return out;
}

bool is_cluster(const json& doc) {
  return doc.is_object() && doc.value("schema", std::string()) == kClusterTopologySchema;
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (const auto& p : parts) {
    if (!s.empty()) s += sep;
    s += p;
  }
  return s;
}

// identical_hosts: every host in one fingerprint group; details name each odd host's fields.
void check_identical(const json& doc, TopologyChecks& c) {
  if (!is_cluster(doc)) {
    c.add(true, "1 host", "identical hosts");
    return;
  }
  const json& groups = array_of(doc, "groups");
  const json& hosts = array_of(doc, "hosts");
  std::vector<std::string> odd;
  for (std::size_t g = 1; g < groups.size(); ++g)
    for (const auto& h : array_of(groups[g], "hosts")) odd.push_back(h.get<std::string>());
  for (const auto& d : array_of(doc, "differences")) {
    c.detail(fmt::format("{}: {} = {} (majority {})", string_at(d, "host"), string_at(d, "field"),
                         d.value("value", json()).dump(), d.value("majority", json()).dump()));
  }
  c.add(odd.empty(),
        odd.empty()
            ? fmt::format("{} hosts, one topology", hosts.size())
            : fmt::format("{} of {} hosts differ: {}", odd.size(), hosts.size(), joined(odd, ", ")),
        "identical hosts");
}

// A topology requirement on one host's document, or on every host of a cluster-topology
// document, naming the hosts that fail it.
RequirementResult evaluate(const TopologyRequirement& q, const json& doc) {
  RequirementResult out;
  if (!is_cluster(doc)) {
    out = evaluate_host(q, doc);
  } else {
    const json& hosts = array_of(doc, "hosts");
    std::vector<std::string> failed;
    std::string first;
    out.name = q.name;
    out.kind = "topology";
    out.line = q.line;
    out.severity = q.severity;
    out.passed = true;
    for (const auto& h : hosts) {
      const std::string name = string_at(h, "host");
      RequirementResult r = evaluate_host(q, h.value("topology", json::object()));
      if (out.expected.empty()) {
        first = r.measured;
        out.expected = r.expected;
      }
      if (r.passed) continue;
      out.passed = false;
      failed.push_back(name + ": " + r.measured);
      for (const auto& d : r.details) add_detail(out, name + ": " + d);
    }
    if (!out.passed) {
      out.measured = joined(failed, "; ");
    } else if (!first.empty()) {
      out.measured = fmt::format("{} (each of {} hosts)", first, hosts.size());
    }
  }
  if (q.identical_hosts) {
    RequirementResult same;
    TopologyChecks c(same);
    check_identical(doc, c);
    c.finish();
    out.passed = out.passed && same.passed;
    out.measured += (out.measured.empty() ? "" : "; ") + same.measured;
    out.expected += (out.expected.empty() ? "" : "; ") + same.expected;
    for (const auto& d : same.details) add_detail(out, d);
  }
  return out;
}

RequirementResult evaluate(const LinksRequirement& q, const std::vector<LinkSample>& pairs) {
  RequirementResult out;
  out.name = q.name;
  out.kind = "links";
  out.line = q.line;
  out.severity = q.severity;
  TopologyChecks c(out);
  const LinksVerdict verdict = links_verdict(pairs, q.min_fraction_of_median.value_or(0.8));
  if (verdict.links.empty()) c.add(false, "no links between hosts measured", "links measured");
  if (q.min_fraction_of_median) {
    std::vector<std::string> named;
    for (const auto& s : verdict.stragglers) {
      std::string who = s.peer ? s.host + " -> " + *s.peer : s.host;
      if (std::find(named.begin(), named.end(), who) == named.end()) named.push_back(who);
      c.detail(fmt::format("{}: {} {:.3g} is {:.2f} of the median {:.3g}", who, s.metric, s.value,
                           s.fraction, s.median));
    }
    c.add(named.empty(),
          named.empty()
              ? std::string("no straggler")
              : fmt::format("straggler{}: {}", named.size() == 1 ? "" : "s", joined(named, ", ")),
          fmt::format("every host and link >= {:g} of the median", *q.min_fraction_of_median));
  }
  auto limit = [&](bool bandwidth, double bound) {
    std::vector<std::string> bad;
    std::optional<double> worst;
    for (const auto& l : verdict.links) {
      auto v = bandwidth ? l.bandwidth_GBps : l.latency_us;
      if (!v) continue;
      if (!worst || (bandwidth ? *v < *worst : *v > *worst)) worst = v;
      if (bandwidth ? *v < bound : *v > bound) {
        bad.push_back(l.src + " -> " + l.dst);
        c.detail(fmt::format("{} -> {}: {:.3g} {}", l.src, l.dst, *v, bandwidth ? "GB/s" : "us"));
      }
    }
    std::string what = bandwidth ? "GB/s" : "us";
    c.add(bad.empty() && worst,
          !worst        ? "no " + std::string(bandwidth ? "bandwidth" : "latency") + " measured"
          : bad.empty() ? fmt::format("worst link {:.3g} {}", *worst, what)
                        : fmt::format("{} link{} beyond: {}", bad.size(),
                                      bad.size() == 1 ? "" : "s", joined(bad, ", ")),
          fmt::format("every link {} {:g} {}", bandwidth ? ">=" : "<=", bound, what));
  };
  if (q.min_GBps) limit(true, *q.min_GBps);
  if (q.max_latency_us) limit(false, *q.max_latency_us);
  c.finish();
  return out;
}

}  // namespace

int CheckReport::passed() const {
  return static_cast<int>(
      std::count_if(items.begin(), items.end(), [](const auto& r) { return r.passed; }));
}

int CheckReport::failed() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const auto& r) {
    return !r.passed && r.severity == Severity::Error;
  }));
}

int CheckReport::warnings() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const auto& r) {
    return !r.passed && r.severity == Severity::Warning;
  }));
}

std::string CheckReport::summary() const {
  return fmt::format("{} passed, {} failed, {} warning{}", passed(), failed(), warnings(),
                     warnings() == 1 ? "" : "s");
}

void validate_topology(const json& doc, const std::string& source) {
  const std::string expected = fmt::format("{} or {}", kTopologySchema, kClusterTopologySchema);
  if (!doc.is_object())
    usage_error("{}: not a JSON object: expected a {} document", source, expected);
  auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string()) {
    usage_error("{}: no 'schema' field: expected a {} document", source, expected);
  }
  if (schema->get<std::string>() == kClusterTopologySchema) {
    auto hosts = doc.find("hosts");
    if (hosts == doc.end() || !hosts->is_array() || hosts->empty()) {
      usage_error("{}: 'hosts' must be a non-empty array in a {} document", source,
                  kClusterTopologySchema);
    }
    for (const auto& h : *hosts) {
      if (!h.is_object() || !h.contains("host") || !h["host"].is_string() ||
          !h.contains("topology")) {
        usage_error("{}: every entry of 'hosts' needs 'host' and 'topology'", source);
      }
      validate_topology(h["topology"], source + " (host " + h["host"].get<std::string>() + ")");
    }
    for (const char* key : {"groups", "differences"}) {
      auto it = doc.find(key);
      if (it == doc.end() || !it->is_array())
        usage_error("{}: '{}' must be an array in a {} document", source, key,
                    kClusterTopologySchema);
    }
    return;
  }
  if (schema->get<std::string>() != kTopologySchema) {
    usage_error("{}: unknown schema '{}': expected {}", source, schema->get<std::string>(),
                expected);
  }
  for (const char* key : {"numa_nodes", "pci_devices", "gpus", "nics", "warnings"}) {
    auto it = doc.find(key);
    if (it != doc.end() && !it->is_array()) {
      usage_error("{}: '{}' must be an array in a {} document", source, key, kTopologySchema);
    }
  }
}

std::vector<LinkSample> link_samples(const json& doc, const std::string& source) {
  if (!doc.is_object() || doc.value("schema", std::string()) != kLinksSchema) {
    usage_error("{}: expected a {} document (probe links --format json)", source, kLinksSchema);
  }
  auto pairs = doc.find("pairs");
  if (pairs == doc.end() || !pairs->is_array())
    usage_error("{}: 'pairs' must be an array in a {} document", source, kLinksSchema);
  std::vector<LinkSample> out;
  for (const auto& p : *pairs) {
    try {
      LinkSample s;
      s.src_rank = p.at("src_rank").get<int>();
      s.dst_rank = p.at("dst_rank").get<int>();
      s.src_host = p.at("src_host").get<std::string>();
      s.dst_host = p.at("dst_host").get<std::string>();
      if (p.contains("bandwidth_GBps") && p["bandwidth_GBps"].is_number())
        s.bandwidth_GBps = p["bandwidth_GBps"].get<double>();
      if (p.contains("latency_us") && p["latency_us"].is_number())
        s.latency_us = p["latency_us"].get<double>();
      out.push_back(s);
    } catch (const json::exception&) {
      usage_error("{}: a pair lacks src_rank, dst_rank, src_host or dst_host: {}", source,
                  p.dump());
    }
  }
  return out;
}

CheckReport evaluate_spec(const Spec& spec, const std::vector<ResultFile>& results,
                          const json& topology, const std::string& topology_source,
                          const json& links, const std::string& links_source) {
  CheckReport report;
  report.spec_path = spec.path;
  report.spec_name = spec.name;
  for (const auto& f : results) report.result_files.push_back(f.path);
  for (const auto& q : spec.results) report.items.push_back(evaluate(q, results));
  if (!spec.topology.empty()) {
    report.topology_source = topology_source;
    for (const auto& q : spec.topology) report.items.push_back(evaluate(q, topology));
  }
  if (!spec.links.empty()) {
    const std::vector<LinkSample> pairs = link_samples(links, links_source);
    report.links_source = links_source;
    for (const auto& q : spec.links) report.items.push_back(evaluate(q, pairs));
  }
  return report;
}

}  // namespace cb
