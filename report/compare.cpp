#include "report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/environment.hpp"
#include "common/units.hpp"
#include "report/repetitions.hpp"
#include "report/significance.hpp"

namespace cb {

namespace {

using Group = std::vector<ResultRecord>;  // one record per repetition (launch)

// Records of the files grouped by key, one entry per repetition: a summary record from
// `run --repeat` contributes each of its repetitions, a plain record one, several records with
// one key (runs concatenated into one .jsonl, a directory of earlier runs) one each.
std::map<RecordKey, Group> group_by_key(const std::vector<const ResultFile*>& files) {
  std::map<RecordKey, Group> groups;
  for (const ResultFile* f : files) {
    for (const auto& r : f->records) {
      for (auto& launch : launches_of(r)) groups[key_of(r)].push_back(std::move(launch));
    }
  }
  for (auto& [key, g] : groups) {
    std::stable_sort(g.begin(), g.end(),
                     [](const auto& a, const auto& b) { return a.time_us < b.time_us; });
  }
  return groups;
}

// The median repetition by time (the lower one for an even count), for the single-launch rule.
const ResultRecord& median(const Group& g) {
  return g[(g.size() - 1) / 2];
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

double figure(const ResultRecord& r, Metric metric) {
  return metric == Metric::Busbw ? r.busbw_GBps.value_or(0) : r.time_us;
}

Side side_of(const Group& g, Metric metric) {
  Side s;
  std::vector<double> p50, p99, cv;
  for (const auto& r : g) {
    s.values.push_back(figure(r, metric));
    p50.push_back(r.p50_us);
    p99.push_back(r.p99_us);
    cv.push_back(r.cv);
    s.outlier_runs += has_outliers(r) ? 1 : 0;
  }
  s.runs = static_cast<int>(g.size());
  if (g.size() == 1) {
    s.value = s.values.front();
    s.p50_us = g.front().p50_us;
    s.p99_us = g.front().p99_us;
    s.cv = g.front().cv;
    s.spread = spread(g.front());
    return s;
  }
  s.value = median_of(s.values);
  s.p50_us = median_of(p50);
  s.p99_us = median_of(p99);
  s.cv = median_of(cv);
  s.spread = s.p50_us > 0 ? std::max(0.0, (s.p99_us - s.p50_us) / s.p50_us) : 0;
  return s;
}

// One-sided p-values of "new is worse" and "new is better" over the repetitions.
std::pair<double, double> directional_p(const Comparison& c) {
  const auto& b = c.base.values;
  const auto& n = c.next.values;
  if (c.metric == Metric::Time) return {mann_whitney_greater(b, n), mann_whitney_greater(n, b)};
  return {mann_whitney_greater(n, b), mann_whitney_greater(b, n)};
}

// Neighbouring sizes of the same series that moved the same way by more than half the
// threshold: 0, 1 or 2.
void count_support(std::vector<Comparison>& rows, double threshold) {
  std::map<RecordKey, std::vector<Comparison*>> series;
  for (auto& c : rows) {
    RecordKey k = c.key;
    k.bytes = 0;
    series[k].push_back(&c);  // rows are in key order, so by size within a series
  }
  auto same_way = [threshold](const Comparison& a, const Comparison& b) {
    return std::abs(b.worse) > threshold / 2 && (a.worse > 0) == (b.worse > 0);
  };
  for (auto& [k, list] : series) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      int support = 0;
      if (i > 0 && same_way(*list[i], *list[i - 1])) ++support;
      if (i + 1 < list.size() && same_way(*list[i], *list[i + 1])) ++support;
      list[i]->support = support;
    }
  }
}

// Benjamini-Hochberg over m records rejects a record at the smallest possible p only when at
// least ceil(p * m / alpha) records reach it together. Above one, a change confined to fewer
// records (one size of one collective) cannot be found, however large: say so, and how many
// repetitions a side would let a single record be.
void say_how_many_records_must_move_together(const std::vector<Comparison*>& tested,
                                             double smallest_p, double alpha, Warnings& w) {
  const double m = static_cast<double>(tested.size());
  const auto together = static_cast<long>(std::ceil(smallest_p * m / alpha - 1e-9));
  if (together <= 1) return;
  int base_runs = tested.front()->base.runs, new_runs = tested.front()->next.runs;
  for (const Comparison* c : tested) {
    base_runs = std::min(base_runs, c->base.runs);
    new_runs = std::min(new_runs, c->next.runs);
  }
  int enough = std::max(base_runs, new_runs);
  while (mann_whitney_min_p(enough, enough) > alpha / m) ++enough;
  w.add(fmt::format(
      "{} and {} repetitions (base/new) over {} records: a change is significant only where at "
      "least {} records move together, each with every repetition of one side beyond every one "
      "of the other (p = {:.3g}); a change at fewer sizes cannot be found, however large: "
      "--repeat {} on both sides lets a single record be",
      base_runs, new_runs, tested.size(), together, smallest_p, enough));
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
          r.placement,  r.root,    r.nranks,    r.bytes, r.env};
}

std::string describe(const RecordKey& k) {
  std::string s = fmt::format("{} {}/{} {} {} {}", k.collective, k.backend, k.algorithm, k.dtype,
                              k.op, k.placement);
  if (k.root >= 0) s += fmt::format(" root {}", k.root);
  s += fmt::format(" {} ranks", k.nranks);
  if (k.collective != "barrier") s += fmt::format(" {}", format_size(k.bytes));
  if (!k.env.empty()) s += " [" + k.env + "]";
  return s;
}

const char* metric_name(Metric m) {
  return m == Metric::Busbw ? "busbw" : "time";
}

const char* method_name(Method m) {
  return m == Method::UTest ? "u-test" : "noise-band";
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

std::vector<const Comparison*> CompareReport::ordered() const {
  std::vector<const Comparison*> out;
  for (const auto& c : rows) out.push_back(&c);
  std::stable_sort(out.begin(), out.end(), [](const Comparison* a, const Comparison* b) {
    if (a->verdict != b->verdict)
      return static_cast<int>(a->verdict) < static_cast<int>(b->verdict);
    if (a->verdict != Verdict::Regression && a->verdict != Verdict::Improvement) return false;
    if (a->support != b->support) return a->support > b->support;
    return std::abs(a->worse) > std::abs(b->worse);
  });
  return out;
}

CompareReport compare_results(const ResultFile& base, const ResultFile& next,
                              const CompareOptions& options) {
  return compare_results(std::vector<ResultFile>{base}, next, options);
}

CompareReport compare_results(const std::vector<ResultFile>& bases, const ResultFile& next,
                              const CompareOptions& options) {
  CompareReport report;
  std::vector<const ResultFile*> base_files;
  for (const auto& b : bases) base_files.push_back(&b);
  report.base_path = bases.size() == 1 ? bases.front().path
                                       : fmt::format("{} files ({} .. {})", bases.size(),
                                                     bases.front().path, bases.back().path);
  report.new_path = next.path;
  report.options = options;
  Warnings warnings(report.warnings);

  // Settings and hardware against the most recent base file that has metadata.
  const ResultFile* base_meta = nullptr;
  for (const ResultFile* f : base_files) {
    if (f->meta) base_meta = f;
  }
  if (base_meta && next.meta) {
    compare_meta(*base_meta->meta, *next.meta,
                 base_meta->meta_json.value("topology", nlohmann::json()),
                 next.meta_json.value("topology", nlohmann::json()), warnings);
  }
  for (const ResultFile* f : base_files) {
    if (!f->meta) {
      report.notes.push_back(
          fmt::format("{} has no run metadata ({}): hosts, hardware and settings not compared",
                      f->path, f->format));
    }
  }
  if (!next.meta) {
    report.notes.push_back(
        fmt::format("{} has no run metadata ({}): hosts, hardware and settings not compared",
                    next.path, next.format));
  }

  auto base_groups = group_by_key(base_files);
  auto new_groups = group_by_key({&next});
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
    c.method = c.base.runs >= 2 && c.next.runs >= 2 ? Method::UTest : Method::NoiseBand;
    report.rows.push_back(c);
  }
  for (const auto& [key, ng] : new_groups) {
    if (!base_groups.count(key)) report.new_only.push_back(key);
  }
  int noisy = 0;
  for (const auto& c : report.rows) noisy += c.base.outlier_runs + c.next.outlier_runs > 0 ? 1 : 0;
  if (noisy > 0) {
    report.notes.push_back(fmt::format(
        "{} of {} compared records had outliers on a side (the `outliers` column): their changes "
        "are less certain; pin ranks, raise --min-time or quiet the machine, and use --repeat",
        noisy, report.rows.size()));
  }

  // Significance over repetitions: one family for "worse", one for "better", each corrected
  // with Benjamini-Hochberg over every record judged this way.
  std::vector<Comparison*> tested;
  std::vector<double> p_worse, p_better;
  for (auto& c : report.rows) {
    if (c.method != Method::UTest) continue;
    auto [w, b] = directional_p(c);
    tested.push_back(&c);
    p_worse.push_back(w);
    p_better.push_back(b);
  }
  auto q_worse = benjamini_hochberg(p_worse), q_better = benjamini_hochberg(p_better);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    Comparison& c = *tested[i];
    bool worse = c.worse >= 0;
    c.p_value = worse ? p_worse[i] : p_better[i];
    c.q_value = worse ? q_worse[i] : q_better[i];
  }
  int fallback = 0;
  double weakest = 0;  // the largest smallest-possible p among tested records
  for (auto& c : report.rows) {
    if (c.method == Method::NoiseBand) {
      ++fallback;
      c.verdict = decide(c, options);
      continue;
    }
    weakest = std::max(weakest, mann_whitney_min_p(c.base.runs, c.next.runs));
    if (std::abs(c.worse) <= options.threshold) {
      c.verdict = Verdict::Unchanged;
    } else if (c.q_value <= options.alpha) {
      c.verdict = c.worse > 0 ? Verdict::Regression : Verdict::Improvement;
    } else {
      c.verdict = Verdict::Noise;
    }
  }
  count_support(report.rows, options.threshold);
  if (fallback > 0) {
    warnings.add(fmt::format(
        "{} of {} records have one repetition on a side: no significance can be judged for them; "
        "they are judged by the single-launch noise-band rule, which cannot tell a slow launch "
        "from a regression: run both sides with --repeat 5 or more",
        fallback, report.rows.size()));
  }
  if (!tested.empty() && weakest > options.alpha) {
    warnings.add(fmt::format(
        "too few repetitions: the smallest possible p-value is {:.3g}, above the level {:g}, so "
        "no change can be significant: use --repeat 5 or more on both sides",
        weakest, options.alpha));
  } else if (!tested.empty()) {
    say_how_many_records_must_move_together(tested, weakest, options.alpha, warnings);
  }
  return report;
}

}  // namespace cb
