#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/environment.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

using Group = std::vector<const ResultRecord*>;

// Records of one file grouped by key; several records with one key (runs concatenated into one
// .jsonl) are reduced to the median by time_us (the lower median for an even count).
std::map<RecordKey, Group> group_by_key(const ResultFile& f) {
  std::map<RecordKey, Group> groups;
  for (const auto& r : f.records) groups[key_of(r)].push_back(&r);
  for (auto& [key, g] : groups) {
    std::stable_sort(g.begin(), g.end(), [](auto* a, auto* b) { return a->time_us < b->time_us; });
  }
  return groups;
}

const ResultRecord& median(const Group& g) {
  return *g[(g.size() - 1) / 2];
}

// Warnings are collected once each, in the order found.
class Warnings {
 public:
  explicit Warnings(std::vector<std::string>& out) : out_(out) {}
  void add(std::string w) {
    if (seen_.insert(w).second) out_.push_back(std::move(w));
  }

 private:
  std::vector<std::string>& out_;
  std::set<std::string> seen_;
};

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

void compare_topology(const nlohmann::json& a, const nlohmann::json& b, Warnings& w) {
  if (a.is_null() || b.is_null()) return;
  auto fingerprint = [](const nlohmann::json& t) -> std::string {
    if (t.is_object()) {
      auto it = t.find("fingerprint");
      if (it != t.end() && it->is_string()) return it->get<std::string>();
    }
    return {};
  };
  std::string fa = fingerprint(a), fb = fingerprint(b);
  if (!fa.empty() && !fb.empty()) {
    if (fa != fb)
      w.add(fmt::format("hardware differs: topology fingerprint {} (base) vs {} (new)", fa, fb));
    return;
  }
  if (a == b) return;
  std::vector<std::string> keys;
  if (a.is_object() && b.is_object()) {
    std::set<std::string> names;
    for (const auto& [k, v] : a.items()) names.insert(k);
    for (const auto& [k, v] : b.items()) names.insert(k);
    for (const auto& k : names) {
      if (!a.contains(k) || !b.contains(k) || a[k] != b[k]) keys.push_back(k);
    }
  }
  w.add(keys.empty() ? std::string("hardware differs: the topology summaries are not the same")
                     : fmt::format("hardware differs: topology {} not the same", join(keys, ", ")));
}

void compare_meta(const RunMeta& a, const RunMeta& b, const nlohmann::json& ta,
                  const nlohmann::json& tb, Warnings& w) {
  if (a.version != b.version) {
    w.add(fmt::format("commbench version differs: {} (base) vs {} (new)", a.version, b.version));
  }
  if (a.hosts != b.hosts) {
    w.add(
        fmt::format("hosts differ: {} (base) vs {} (new)", join(a.hosts, ","), join(b.hosts, ",")));
  }
  if (a.nranks != b.nranks || a.nnodes != b.nnodes || a.ranks_per_node != b.ranks_per_node) {
    w.add(
        fmt::format("job shape differs: {} ranks on {} nodes (base) vs {} ranks on {} nodes (new)",
                    a.nranks, a.nnodes, b.nranks, b.nnodes));
  }
  for (const auto& [backend, lib] : a.libraries) {
    auto it = b.libraries.find(backend);
    if (it != b.libraries.end() && it->second != lib) {
      w.add(fmt::format("{} library differs: {} (base) vs {} (new)", backend, lib, it->second));
    }
  }
  std::set<std::string> names;
  for (const auto& [k, v] : a.environment) names.insert(k);
  for (const auto& [k, v] : b.environment) names.insert(k);
  std::vector<std::string> diffs;
  for (const auto& k : names) {
    if (launcher_bookkeeping(k)) continue;
    auto ia = a.environment.find(k), ib = b.environment.find(k);
    std::string va = ia == a.environment.end() ? "unset" : k + "=" + ia->second;
    std::string vb = ib == b.environment.end() ? "unset" : k + "=" + ib->second;
    if (va != vb) diffs.push_back(fmt::format("{} (base) vs {} (new)", va, vb));
  }
  if (!diffs.empty()) w.add("communication settings differ: " + join(diffs, "; "));
  compare_topology(ta, tb, w);
}

Side side_of(const Group& g, Metric metric) {
  const ResultRecord& r = median(g);
  Side s;
  s.value = metric == Metric::Busbw ? r.busbw_GBps.value_or(0) : r.time_us;
  s.p50_us = r.p50_us;
  s.p99_us = r.p99_us;
  s.cv = r.cv;
  s.spread = spread(r);
  s.runs = static_cast<int>(g.size());
  return s;
}

Verdict decide(const Comparison& c, const CompareOptions& o) {
  bool beyond = std::abs(c.worse) > o.threshold;
  if (!beyond) return Verdict::Unchanged;
  bool outside_noise = std::abs(c.worse) > c.noise;
  if (c.worse > 0 && outside_noise && c.median_worse > o.threshold) return Verdict::Regression;
  if (c.worse < 0 && outside_noise && -c.median_worse > o.threshold) return Verdict::Improvement;
  return Verdict::Noise;
}

}  // namespace

RecordKey key_of(const ResultRecord& r) {
  return {r.collective, r.backend, r.algorithm, r.dtype, r.op,
          r.placement,  r.root,    r.nranks,    r.bytes};
}

std::string describe(const RecordKey& k) {
  std::string s = fmt::format("{} {}/{} {} {} {}", k.collective, k.backend, k.algorithm, k.dtype,
                              k.op, k.placement);
  if (k.root >= 0) s += fmt::format(" root {}", k.root);
  s += fmt::format(" {} ranks", k.nranks);
  if (k.collective != "barrier") s += fmt::format(" {}", format_size(k.bytes));
  return s;
}

const char* metric_name(Metric m) {
  return m == Metric::Busbw ? "busbw" : "time";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Regression:
      return "regression";
    case Verdict::Improvement:
      return "improvement";
    case Verdict::Noise:
      return "noise";
    case Verdict::Unchanged:
      return "unchanged";
  }
  return "unchanged";
}

double spread(const ResultRecord& r) {
  if (r.p50_us <= 0) return 0;
  return std::max(0.0, (r.p99_us - r.p50_us) / r.p50_us);
}

int CompareReport::count(Verdict v) const {
  return static_cast<int>(
      std::count_if(rows.begin(), rows.end(), [v](const Comparison& c) { return c.verdict == v; }));
}

int CompareReport::regressions() const {
  return count(Verdict::Regression) +
         (options.fail_on_missing ? static_cast<int>(base_only.size()) : 0);
}

std::string CompareReport::summary() const {
  auto plural = [](int n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  return fmt::format(
      "{} compared: {}, {}, {} within noise, {} unchanged; {} only in base, {} only "
      "in new",
      rows.size(), plural(count(Verdict::Regression), "regression", "regressions"),
      plural(count(Verdict::Improvement), "improvement", "improvements"), count(Verdict::Noise),
      count(Verdict::Unchanged), base_only.size(), new_only.size());
}

CompareReport compare_results(const ResultFile& base, const ResultFile& next,
                              const CompareOptions& options) {
  CompareReport report;
  report.base_path = base.path;
  report.new_path = next.path;
  report.options = options;
  Warnings warnings(report.warnings);

  if (base.meta && next.meta) {
    compare_meta(*base.meta, *next.meta, base.meta_json.value("topology", nlohmann::json()),
                 next.meta_json.value("topology", nlohmann::json()), warnings);
  }
  for (const ResultFile* f : {&base, &next}) {
    if (!f->meta) {
      report.notes.push_back(
          fmt::format("{} has no run metadata ({}): hosts, hardware and settings not compared",
                      f->path, f->format));
    }
  }

  auto base_groups = group_by_key(base);
  auto new_groups = group_by_key(next);
  for (const auto& [key, bg] : base_groups) {
    auto it = new_groups.find(key);
    if (it == new_groups.end()) {
      report.base_only.push_back(key);
      continue;
    }
    const Group& ng = it->second;
    const ResultRecord& rb = median(bg);
    const ResultRecord& rn = median(ng);
    if (rb.library != rn.library) {
      warnings.add(fmt::format("{} library differs: {} (base) vs {} (new)", key.backend, rb.library,
                               rn.library));
    }
    Comparison c;
    c.key = key;
    bool bandwidth = key.collective != "barrier" && key.bytes >= options.latency_bytes &&
                     rb.busbw_GBps && rn.busbw_GBps;
    c.metric = bandwidth ? Metric::Busbw : Metric::Time;
    c.base = side_of(bg, c.metric);
    c.next = side_of(ng, c.metric);
    if (c.base.value <= 0 || c.next.value <= 0 || c.base.p50_us <= 0 || c.next.p50_us <= 0) {
      report.notes.push_back(
          fmt::format("{}: a zero {} or p50, not compared", describe(key), metric_name(c.metric)));
      continue;
    }
    c.change = c.next.value / c.base.value - 1;
    c.worse = c.metric == Metric::Busbw ? -c.change : c.change;
    c.median_worse = c.metric == Metric::Busbw ? 1 - c.base.p50_us / c.next.p50_us
                                               : c.next.p50_us / c.base.p50_us - 1;
    c.noise = options.noise_factor * std::max(c.base.spread, c.next.spread);
    c.verdict = decide(c, options);
    report.rows.push_back(c);
  }
  for (const auto& [key, ng] : new_groups) {
    if (!base_groups.count(key)) report.new_only.push_back(key);
  }
  return report;
}

}  // namespace cb
