#include "report/compare/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <limits>
#include <numeric>
#include <optional>
#include <set>

#include "common/environment.hpp"
#include "common/launch_control.hpp"
#include "common/units.hpp"
#include "report/compare/compare_output.hpp"
#include "report/compare/single_launch.hpp"
#include "report/compare/verdict_line.hpp"
#include "report/launch_statistics.hpp"
#include "report/repetitions.hpp"

namespace cb {

namespace {

using Group = std::vector<ResultRecord>;  // one record per launch

// One side's launches: every launch of every file (a `run --repeat` summary's repetitions, the
// records of one repetition index in a .jsonl, a plain file's one launch), its control
// measurement, and each measurement's record in it.
struct Launches {
  std::vector<ControlFigures> control;  // per launch
  std::vector<std::size_t> file;        // per launch: the file it came from
  std::vector<std::string> moved;       // per launch: what its control did during it ("": steady)
  std::map<RecordKey, std::vector<std::pair<std::size_t, ResultRecord>>> by_key;
};

const LaunchControl* launch_control_of(const ResultFile& f, int repeat) {
  if (!f.meta) return nullptr;
  for (const auto& c : f.meta->launches) {
    if (c.repeat.value_or(0) == repeat) return &c;
  }
  return nullptr;
}

// What a launch's control did during it beyond the tolerances ("" when steady).
std::string moved_text(const LaunchControl& c) {
  std::string s;
  if (c.pingpong_moved() > kPingpongTolerance) {
    s = fmt::format("core-to-core round trip {:.1f}x apart", c.pingpong_moved());
  }
  if (c.compute_moved() > kComputeTolerance) {
    s += fmt::format("{}compute loop {:.2f}x apart", s.empty() ? "" : ", ", c.compute_moved());
  }
  return s.empty() ? s : s + " between its samples";
}

ControlFigures control_of(const ResultFile& f, int repeat) {
  const LaunchControl* c = launch_control_of(f, repeat);
  return c ? ControlFigures{c->pingpong_ns(), c->compute_us()} : ControlFigures{};
}

Launches collect_launches(const std::vector<const ResultFile*>& files) {
  Launches out;
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    std::map<int, std::size_t> index;  // repetition -> launch
    for (const auto& r : files[fi]->records) {
      for (auto& launch : launches_of(r)) {
        const int repeat = launch.repeat.value_or(0);
        auto it = index.find(repeat);
        if (it == index.end()) {
          it = index.emplace(repeat, out.control.size()).first;
          out.control.push_back(control_of(*files[fi], repeat));
          out.file.push_back(fi);
          const LaunchControl* c = launch_control_of(*files[fi], repeat);
          out.moved.push_back(c ? moved_text(*c) : std::string());
        }
        out.by_key[key_of(r)].emplace_back(it->second, std::move(launch));
      }
    }
  }
  return out;
}

// A measurement's records over the launches, sorted by time (for the medians shown).
Group group_of(const std::vector<std::pair<std::size_t, ResultRecord>>& list) {
  Group g;
  for (const auto& [launch, r] : list) g.push_back(r);
  std::stable_sort(g.begin(), g.end(),
                   [](const auto& a, const auto& b) { return a.time_us < b.time_us; });
  return g;
}

// The median launch by time (the lower one for an even count), for the single-launch rule.
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

Verdict decide(const Comparison& c, const CompareOptions& o) {
  bool beyond = std::abs(c.worse) > o.threshold;
  if (!beyond) return Verdict::Unchanged;
  bool outside_noise = std::abs(c.worse) > c.noise;
  if (c.worse > 0 && outside_noise && c.median_worse > o.threshold) return Verdict::Regression;
  if (c.worse < 0 && outside_noise && -c.median_worse > o.threshold) return Verdict::Improvement;
  return Verdict::Noise;
}

// The p50 time's log in each launch of `side`, one column per key: NaN where a launch lacks it.
LogTable log_table(const Launches& side, const std::vector<RecordKey>& keys) {
  LogTable t(side.control.size(),
             std::vector<double>(keys.size(), std::numeric_limits<double>::quiet_NaN()));
  for (std::size_t k = 0; k < keys.size(); ++k) {
    for (const auto& [launch, r] : side.by_key.at(keys[k])) {
      if (r.p50_us > 0) t[launch][k] = std::log(r.p50_us);
    }
  }
  return t;
}

std::vector<double> column(const LogTable& t, std::size_t k) {
  std::vector<double> out;
  for (const auto& row : t) out.push_back(row[k]);
  return out;
}

// With a history of at least kHistoryNights base files, each record's floor is its own
// night-to-night threshold: each night is the median of the record's shape values over that
// file's launches.
void floors_from_history(CompareReport& report, const Launches& base, const LogTable& shape,
                         const std::vector<Comparison*>& rows) {
  if (report.history_nights < kHistoryNights) return;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::map<std::size_t, std::vector<double>> nights;
    for (std::size_t l = 0; l < shape.size(); ++l) {
      if (std::isfinite(shape[l][k])) nights[base.file[l]].push_back(shape[l][k]);
    }
    std::vector<double> nightly;
    for (const auto& [file, v] : nights) nightly.push_back(median_of(v));
    const double t = history_threshold(nightly);
    if (t <= 0) continue;
    rows[k]->floor = std::max(t, 1 + report.options.level_threshold);
    rows[k]->floor_from_history = true;
  }
}

// The shape test per record and the level test over the records, on the records with at least
// two launches a side.
void judge_over_launches(CompareReport& report, const Launches& base, const Launches& next) {
  std::vector<Comparison*> rows;
  std::vector<RecordKey> keys;
  for (auto& c : report.rows) {
    if (c.method != Method::Shape) continue;
    rows.push_back(&c);
    keys.push_back(c.key);
  }
  if (rows.empty()) return;
  const LogTable base_logs = log_table(base, keys), new_logs = log_table(next, keys);
  const LogTable base_shape = shape_of(base_logs), new_shape = shape_of(new_logs);
  floors_from_history(report, base, base_shape, rows);
  const double confidence = 1 - report.options.alpha;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    Comparison& c = *rows[k];
    const RatioVerdict v =
        judge_log_launches(column(base_shape, k), column(new_shape, k),
                           {c.floor, confidence, static_cast<int>(rows.size())});
    c.ratio = v.ratio;
    c.ratio_low = v.low;
    c.ratio_high = v.high;
    if (v.change == Change::Slower) {
      c.verdict = Verdict::Regression;
    } else if (v.change == Change::Faster) {
      c.verdict = Verdict::Improvement;
    } else {
      c.verdict = std::abs(std::log(c.ratio)) > std::log(c.floor) ? Verdict::Noise
                                                                   : Verdict::Unchanged;
    }
  }

  LevelTest& level = report.level;
  level.judged = true;
  level.floor = 1 + report.options.level_threshold;
  const std::vector<double> base_level = level_of(base_logs), new_level = level_of(new_logs);
  level.base_launches = static_cast<int>(base_level.size());
  level.new_launches = static_cast<int>(new_level.size());
  auto known = [](const std::vector<ControlFigures>& v) {
    return std::all_of(v.begin(), v.end(), [](const ControlFigures& c) { return c.known(); });
  };
  std::vector<std::size_t> use_base(base_level.size()), use_new(new_level.size());
  std::iota(use_base.begin(), use_base.end(), 0);
  std::iota(use_new.begin(), use_new.end(), 0);
  level.gated = known(base.control) && known(next.control);
  level.matched = true;
  if (level.gated) {
    ControlMatch m =
        match_control(base.control, next.control, kPingpongTolerance, kComputeTolerance);
    level.matched = m.matched;
    level.why = m.why;
    use_base = m.reference;
    use_new = m.candidate;
  } else {
    report.notes.push_back(
        "a side has no control measurement (files from before it was recorded, or CSV): the "
        "level test cannot tell a slower machine from a slower build");
  }
  std::vector<double> b, n;
  for (auto i : use_base) b.push_back(base_level[i]);
  for (auto i : use_new) n.push_back(new_level[i]);
  level.verdict = judge_log_launches(b, n, {level.floor, confidence, 1});
  if (level.matched && level.verdict.change == Change::Inconclusive) level.why = level.verdict.why;
}

// One launch a side: why its records cannot be judged here ("" when they can): the launches'
// controls disagree or moved during a launch, or a launch's records show interference.
constexpr double kDisturbedShare = 0.25;

std::string disturbed(const Launches& side, const char* name) {
  std::vector<int> all(side.control.size()), noisy(side.control.size());
  for (const auto& [key, list] : side.by_key) {
    for (const auto& [launch, r] : list) {
      ++all[launch];
      noisy[launch] += has_outliers(r) ? 1 : 0;
    }
  }
  for (std::size_t l = 0; l < all.size(); ++l) {
    if (all[l] > 0 && noisy[l] > kDisturbedShare * all[l]) {
      return fmt::format(
          "the {} launch was disturbed: {} of its {} records had outliers (a mean above {:g} x "
          "p50 or a p99 above {:g} x p50), as when a CPU hog or other load runs beside it",
          name, noisy[l], all[l], kOutlierMeanFactor, kOutlierTailFactor);
    }
  }
  return {};
}

std::string single_launch_gate(const Launches& base, const Launches& next) {
  for (const auto& [side, name] : {std::pair{&base, "base"}, std::pair{&next, "new"}}) {
    for (const auto& moved : side->moved) {
      if (!moved.empty())
        return fmt::format("the {} launch's control moved during it ({})", name, moved);
    }
  }
  for (const auto& [side, name] : {std::pair{&base, "base"}, std::pair{&next, "new"}}) {
    if (std::string why = disturbed(*side, name); !why.empty()) return why;
  }
  auto median_control = [](const Launches& side) {
    std::vector<double> pp, cu;
    for (const auto& c : side.control) {
      if (c.known()) pp.push_back(c.pingpong_ns), cu.push_back(c.compute_us);
    }
    return pp.empty() ? ControlFigures{} : ControlFigures{median_of(pp), median_of(cu)};
  };
  const ControlFigures b = median_control(base), n = median_control(next);
  if (!b.known() || !n.known()) return {};
  const double fp = n.pingpong_ns / b.pingpong_ns, fc = n.compute_us / b.compute_us;
  if (std::max(fp, 1 / fp) > kPingpongTolerance || std::max(fc, 1 / fc) > kComputeTolerance) {
    return fmt::format(
        "the launches' controls disagree (core-to-core round trip {:.0f} ns against {:.0f} ns, "
        "compute loop {:.0f} us against {:.0f} us; they agree within {:g}x and {:g}x): the machine "
        "was in another mode",
        n.pingpong_ns, b.pingpong_ns, n.compute_us, b.compute_us, kPingpongTolerance,
        kComputeTolerance);
  }
  return {};
}

// "allreduce mpi/default float sum out 2 ranks 4 MiB 1.42x slower (99 % CI 0.91-2.2x, floor
// 1.25x)".
std::string single_launch_change(const Comparison& c, double alpha) {
  const bool slower = c.ratio >= 1;
  auto shown = [slower](double v) { return slower ? v : 1 / v; };
  return fmt::format("{} {:.2f}\u00d7 {} ({:g} % CI {:.2f}\u2013{:.2f}\u00d7, floor {:.2f}\u00d7)",
                     describe(c.key), shown(c.ratio), slower ? "slower" : "faster",
                     (1 - alpha) * 100, slower ? c.ratio_low : shown(c.ratio_high),
                     slower ? c.ratio_high : shown(c.ratio_low), c.floor);
}

// The single-launch rule on the records with one launch on a side: each record against its own
// launch's median record (report/compare/single_launch.hpp), gated by the launches' controls.
void judge_single_launches(
    CompareReport& report, const Launches& base, const Launches& next,
    const std::vector<std::pair<const ResultRecord*, const ResultRecord*>>& medians) {
  std::vector<std::size_t> index;
  std::vector<SingleLaunchInput> inputs;
  std::map<RecordKey, std::size_t> series;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const Comparison& c = report.rows[i];
    if (c.method != Method::SingleLaunch) continue;
    auto side = [](const ResultRecord& r) {
      return MedianWithInterval{r.p50_us, r.p50_low_us.value_or(0), r.p50_high_us.value_or(0),
                                r.iters};
    };
    RecordKey s = c.key;
    s.bytes = 0;
    const std::size_t id = series.emplace(s, series.size()).first->second;
    inputs.push_back({side(*medians[i].first), side(*medians[i].second), id, c.key.bytes});
    index.push_back(i);
  }
  if (inputs.empty()) return;
  const double floor = 1 + report.options.threshold;
  const SingleLaunchResult result = judge_single_launch(inputs, floor, 1 - report.options.alpha);
  report.single_launch_level = result.level;
  const std::string gate = single_launch_gate(base, next);
  const std::string rerun = "run both sides with --repeat 5";
  std::optional<std::size_t> undecided;  // the undecided record that moved most
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Comparison& c = report.rows[index[k]];
    const SingleLaunchRow& row = result.rows[k];
    c.ratio = row.ratio;
    c.ratio_low = row.low;
    c.ratio_high = row.high;
    c.floor = floor;
    if (row.change == Change::Slower) {
      c.verdict = Verdict::Regression;
    } else if (row.change == Change::Faster) {
      c.verdict = Verdict::Improvement;
    } else if (row.beyond || row.clears) {
      c.verdict = Verdict::Noise;
      if (!undecided ||
          std::abs(std::log(row.ratio)) > std::abs(std::log(result.rows[*undecided].ratio))) {
        undecided = k;
      }
    } else {
      c.verdict = Verdict::Unchanged;
    }
  }
  const double level = result.level;
  const bool level_beyond = std::abs(std::log(level)) > std::log(floor);
  if (!gate.empty()) {
    // Nothing is decided on such launches; where nothing moved beyond the floor there is
    // nothing to decide.
    bool moved = level_beyond && level > 1;
    for (std::size_t k : index) {
      Comparison& c = report.rows[k];
      if (c.verdict == Verdict::Regression || c.verdict == Verdict::Improvement) {
        c.verdict = Verdict::Noise;
      }
      moved = moved || c.verdict == Verdict::Noise;
    }
    if (moved) {
      report.single_launch_why = fmt::format("one launch a side: {} -- {}", gate, rerun);
    } else {
      report.notes.push_back(
          fmt::format("one launch a side: {}; no record moved beyond the floor", gate));
    }
    return;
  }
  if (level_beyond && level > 1) {
    // Every record slower alike: the shape cancels it. With both launches' controls measured and
    // agreeing (the machine in the same mode, neither launch disturbed: the gate above) it is the
    // build's; without a control it cannot be told from a slower machine.
    auto known = [](const Launches& side) {
      return std::all_of(side.control.begin(), side.control.end(),
                         [](const ControlFigures& c) { return c.known(); });
    };
    if (known(base) && known(next)) {
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        report.rows[index[k]].verdict = Verdict::Regression;
      }
      report.single_launch_level_regression = true;
      return;
    }
    report.single_launch_why = fmt::format(
        "every record {:.2f}\u00d7 slower (geometric mean over {} records, floor {:.2f}\u00d7; "
        "one launch a side, no control measured): one launch cannot tell a slower machine from a "
        "slower build -- {}",
        level, inputs.size(), floor, rerun);
    return;
  }
  if (undecided && report.count(Verdict::Regression) == 0) {
    const SingleLaunchRow& row = result.rows[*undecided];
    const Comparison& shown = report.rows[index[*undecided]];
    std::string why =
        !result.enough_records
            ? fmt::format(
                  "{} records are too few to tell a record's change from the launches' "
                  "scatter",
                  inputs.size())
        : row.clears ? std::string(
                           "it clears the floor at this size only, which one launch's "
                           "bad luck can do")
                     : std::string("its interval does not clear the floor");
    report.single_launch_why =
        fmt::format("{} (one launch a side): {} -- {}",
                    single_launch_change(shown, report.options.alpha), why, rerun);
  }
}

CompareOutcome outcome_of(const CompareReport& r) {
  // Wrong results make the new side's timings meaningless, whatever they compare to.
  if (r.wrong.count > 0) return CompareOutcome::Invalid;
  if (r.regressions() > 0) return CompareOutcome::Regression;
  if (r.rows.empty()) return CompareOutcome::Inconclusive;  // nothing measured is no pass
  if (!r.single_launch_why.empty()) return CompareOutcome::Inconclusive;
  if (!r.level.judged) return CompareOutcome::Ok;
  if (!r.level.matched || r.level.verdict.change == Change::Inconclusive) {
    return CompareOutcome::Inconclusive;
  }
  return r.level.verdict.change == Change::Slower ? CompareOutcome::Regression : CompareOutcome::Ok;
}

}  // namespace

const char* metric_name(Metric m) {
  return m == Metric::Busbw ? "busbw" : "time";
}

const char* method_name(Method m) {
  switch (m) {
    case Method::Shape:
      return "shape";
    case Method::SingleLaunch:
      return "single-launch";
    case Method::NoiseBand:
      break;
  }
  return "noise-band";
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

  const Launches base_launches = collect_launches(base_files);
  const Launches new_launches = collect_launches({&next});
  std::vector<std::pair<const Group*, const Group*>> groups;  // per row
  std::vector<Group> kept;
  std::vector<std::pair<const ResultRecord*, const ResultRecord*>> median_records;  // per row
  kept.reserve(2 * base_launches.by_key.size());
  for (const auto& [key, bl] : base_launches.by_key) {
    auto it = new_launches.by_key.find(key);
    if (it == new_launches.by_key.end()) {
      report.base_only.push_back(key);
      continue;
    }
    const Group& bg = kept.emplace_back(group_of(bl));
    const Group& ng = kept.emplace_back(group_of(it->second));
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
    const bool intervals = rb.p50_low_us && rb.p50_high_us && rn.p50_low_us && rn.p50_high_us;
    c.method = c.base.runs >= 2 && c.next.runs >= 2 ? Method::Shape
               : intervals                          ? Method::SingleLaunch
                                                    : Method::NoiseBand;
    c.floor = 1 + options.threshold;
    report.rows.push_back(c);
    median_records.emplace_back(&rb, &rn);
  }
  for (const auto& [key, nl] : new_launches.by_key) {
    if (!base_launches.by_key.count(key)) report.new_only.push_back(key);
  }
  int noisy = 0;
  for (const auto& c : report.rows) noisy += c.base.outlier_runs + c.next.outlier_runs > 0 ? 1 : 0;
  if (noisy > 0) {
    report.notes.push_back(fmt::format(
        "{} of {} compared records had outliers on a side (the `outliers` column): their changes "
        "are less certain; pin ranks, raise --min-time or quiet the machine, and use --repeat",
        noisy, report.rows.size()));
  }

  int fallback = 0, single = 0;
  for (auto& c : report.rows) {
    if (c.method == Method::SingleLaunch) ++single;
    if (c.method != Method::NoiseBand) continue;
    ++fallback;
    c.verdict = decide(c, options);
  }
  report.history_nights = static_cast<int>(base_files.size());
  judge_over_launches(report, base_launches, new_launches);
  judge_single_launches(report, base_launches, new_launches, median_records);
  count_support(report.rows, options.threshold);
  if (fallback > 0) {
    warnings.add(fmt::format(
        "{} of {} records have one launch on a side: no confidence bound can be given for them; "
        "they are judged by the single-launch noise-band rule, which cannot tell a slow launch "
        "from a regression: run both sides with --repeat 5",
        fallback, report.rows.size()));
    // A change beyond the threshold that the band swallows is not an OK.
    for (const auto& c : report.rows) {
      if (c.method != Method::NoiseBand || c.verdict != Verdict::Noise ||
          !report.single_launch_why.empty()) {
        continue;
      }
      report.single_launch_why = fmt::format(
          "{} {} in {}, within its noise band of {} (one launch a side): one launch cannot tell "
          "that change from the launches' noise -- run both sides with --repeat 5",
          describe(c.key), percent_change(c.worse), metric_name(c.metric), percent_change(c.noise));
    }
  }
  if (single > 0) {
    warnings.add(fmt::format(
        "{} of {} records have one launch on a side: each is judged against its own launch's "
        "median record, within the interval of its median from its iterations and the launches' "
        "scatter, which cannot show how launches differ: run both sides with --repeat 5 for a "
        "confidence bound over launches",
        single, report.rows.size()));
  }
  for (const auto& r : next.records) {
    if (r.wrong.value_or(0) <= 0) continue;
    if (report.wrong.count++ == 0) {
      report.wrong.first = key_of(r);
      report.wrong.first_wrong = *r.wrong;
    }
  }
  report.outcome = outcome_of(report);
  report.headline = verdict_line(report);
  return report;
}

}  // namespace cb
