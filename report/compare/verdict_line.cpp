#include "report/compare/verdict_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/units.hpp"
#include "report/compare/compare_output.hpp"
#include "report/compare/compare_report.hpp"

namespace cb {

namespace {

std::string ratio_text(double r) {
  return r < 2 ? fmt::format("{:.2f}", r) : fmt::format("{:.1f}", r);
}

std::string confidence_text(double alpha) {
  return fmt::format("{:g} %", (1 - alpha) * 100);
}

// "1 MiB", "1-8 MiB" (one unit), "512 KiB-2 MiB".
std::string size_range(std::uint64_t lo, std::uint64_t hi) {
  const std::string a = format_size(lo), b = format_size(hi);
  if (lo == hi) return a;
  auto unit = [](const std::string& s) {
    auto sp = s.find(' ');
    return sp == std::string::npos ? std::string() : s.substr(sp);
  };
  if (!unit(a).empty() && unit(a) == unit(b)) return a.substr(0, a.find(' ')) + "\u2013" + b;
  return a + "\u2013" + b;
}

// The series a record belongs to, named by what varies among the compared records: the
// collective, then backend/algorithm, dtype, op, placement, root, ranks and env where they do.
std::string series_name(const RecordKey& k, const std::vector<Comparison>& rows) {
  std::set<std::string> backends, dtypes, ops, places, envs;
  std::set<int> roots, ranks;
  for (const auto& c : rows) {
    if (c.key.collective != k.collective || c.key.split != k.split) continue;
    backends.insert(c.key.backend + "/" + c.key.algorithm);
    dtypes.insert(c.key.dtype);
    ops.insert(c.key.op);
    places.insert(c.key.placement);
    envs.insert(c.key.env);
    roots.insert(c.key.root);
    ranks.insert(c.key.nranks);
  }
  std::string s = k.split.empty() ? k.collective : fmt::format("{} {}", k.collective, k.split);
  if (backends.size() > 1) s += " " + k.backend + "/" + k.algorithm;
  if (dtypes.size() > 1) s += " " + k.dtype;
  if (ops.size() > 1) s += " " + k.op;
  if (places.size() > 1) s += " " + k.placement;
  if (roots.size() > 1) s += fmt::format(" root {}", k.root);
  if (ranks.size() > 1) s += fmt::format(" {} ranks", k.nranks);
  if (envs.size() > 1 && !k.env.empty()) s += " [" + k.env + "]";
  return s;
}

RecordKey series_of(RecordKey k) {
  k.bytes = 0;
  return k;
}

std::string launches_text(const Comparison& c) {
  return fmt::format("{} v {} launches", c.base.runs, c.next.runs);
}

// A shape-test change: "3.0x slower (99 % CI 2.7-3.3x, floor 1.25x ...".
std::string shape_change(const CompareReport& r, const std::vector<const Comparison*>& group) {
  double log_sum = 0, low = 1e300, high = 0, floor = 0;
  bool history = false;
  for (const Comparison* c : group) {
    log_sum += std::log(c->ratio);
    low = std::min(low, c->ratio_low);
    high = std::max(high, c->ratio_high);
    floor = std::max(floor, c->floor);
    history = history || c->floor_from_history;
  }
  const double ratio = std::exp(log_sum / static_cast<double>(group.size()));
  const bool slower = ratio >= 1;
  auto shown = [slower](double v) { return slower ? v : 1 / v; };
  return fmt::format("{}\u00d7 {} ({} CI {}\u2013{}\u00d7, floor {}\u00d7{}; {})",
                     ratio_text(shown(ratio)), slower ? "slower" : "faster",
                     confidence_text(r.options.alpha),
                     ratio_text(slower ? low : shown(high)), ratio_text(slower ? high : shown(low)),
                     ratio_text(floor), history ? " from its nights" : "",
                     launches_text(*group.front()));
}

std::string noise_band_change(const Comparison& c) {
  return fmt::format("{} worse in {} (one launch a side: noise-band rule, threshold {:g} %)",
                     percent_change(c.worse), metric_name(c.metric),
                     (c.floor - 1) * 100);
}

// The regressed records grouped by series, the first listed group first.
std::string regressions_line(const CompareReport& r) {
  std::vector<const Comparison*> bad;
  for (const Comparison* c : r.ordered()) {
    if (c->verdict == Verdict::Regression) bad.push_back(c);
  }
  std::vector<std::string> parts;
  if (!bad.empty()) {
    std::map<RecordKey, std::vector<const Comparison*>> series;
    std::vector<RecordKey> order;
    for (const Comparison* c : bad) {
      auto& g = series[series_of(c->key)];
      if (g.empty()) order.push_back(series_of(c->key));
      g.push_back(c);
    }
    for (const auto& s : order) {
      const auto& g = series[s];
      std::uint64_t lo = g.front()->key.bytes, hi = lo;
      for (const Comparison* c : g) lo = std::min(lo, c->key.bytes), hi = std::max(hi, c->key.bytes);
      std::string where = series_name(g.front()->key, r.rows);
      if (g.front()->key.collective != "barrier") where += fmt::format(" {}", size_range(lo, hi));
      const bool shape = g.front()->method != Method::NoiseBand;
      parts.push_back(where + " " + (shape ? shape_change(r, g) : noise_band_change(*g.front())));
    }
  }
  if (r.options.fail_on_missing && !r.base_only.empty()) {
    parts.push_back(fmt::format("{} record{} only in base (first: {})", r.base_only.size(),
                                r.base_only.size() == 1 ? "" : "s", describe(r.base_only.front())));
  }
  return parts.empty() ? std::string() : parts.front() +
             (parts.size() > 1 ? fmt::format("; and {} more series", parts.size() - 1) : "");
}

std::string level_text(const CompareReport& r, bool with_launches) {
  const LevelTest& l = r.level;
  const RatioVerdict& v = l.verdict;
  std::string s = fmt::format("level {}\u00d7 ({} CI {}\u2013{}\u00d7, floor {}\u00d7", ratio_text(v.ratio),
                              confidence_text(r.options.alpha), ratio_text(v.low),
                              ratio_text(v.high), ratio_text(l.floor));
  if (with_launches) {
    s += fmt::format("; {} v {} launches{}", v.reference_launches, v.candidate_launches,
                     l.gated ? " whose control agrees" : ", no control measured");
  }
  return s + ")";
}

}  // namespace

std::string verdict_line(const CompareReport& r) {
  if (r.outcome == CompareOutcome::Invalid) {
    const WrongRecords& w = r.wrong;
    return fmt::format("INVALID {}: {} has {} wrong elements{}: validation failed, not compared",
                       r.new_path, describe(w.first), w.first_wrong,
                       w.count > 1 ? fmt::format(" (and {} more record{} with wrong elements)",
                                                 w.count - 1, w.count > 2 ? "s" : "")
                                   : "");
  }
  if (r.outcome == CompareOutcome::Regression && r.single_launch_level_regression &&
      r.count(Verdict::Regression) == static_cast<int>(r.rows.size())) {
    return fmt::format(
        "REGRESSION every record {}\u00d7 slower (geometric mean over {} records, floor "
        "{}\u00d7; 1 v 1 launches whose controls agree)",
        ratio_text(r.single_launch_level), r.rows.size(), ratio_text(1 + r.options.threshold));
  }
  if (r.outcome == CompareOutcome::Regression) {
    std::string shape = regressions_line(r);
    if (!shape.empty()) return "REGRESSION " + shape;
    const RatioVerdict& v = r.level.verdict;
    return fmt::format(
        "REGRESSION every record {}\u00d7 slower (level: geometric mean over {} records, {} CI "
        "{}\u2013{}\u00d7, floor {}\u00d7; {} v {} launches{})",
        ratio_text(v.ratio), r.rows.size(), confidence_text(r.options.alpha), ratio_text(v.low),
        ratio_text(v.high), ratio_text(r.level.floor), v.reference_launches, v.candidate_launches,
        r.level.gated ? " whose control agrees" : ", no control measured");
  }
  if (r.rows.empty()) {
    return fmt::format(
        "INCONCLUSIVE nothing compared: no record of the new file matches one of the base ({} only "
        "in base, {} only in new)",
        r.base_only.size(), r.new_only.size());
  }
  if (r.outcome == CompareOutcome::Inconclusive) {
    return "INCONCLUSIVE " + (r.single_launch_why.empty() ? r.level.why : r.single_launch_why);
  }
  // The record that came closest to its floor.
  const Comparison* worst = nullptr;
  auto closeness = [](const Comparison& c) {
    return c.method != Method::NoiseBand ? std::log(c.ratio_low) / std::log(c.floor)
                                         : c.worse / (c.floor - 1);
  };
  for (const auto& c : r.rows) {
    if (!worst || closeness(c) > closeness(*worst)) worst = &c;
  }
  std::string where = series_name(worst->key, r.rows);
  if (worst->key.collective != "barrier") where += fmt::format(" {}", format_size(worst->key.bytes));
  if (worst->method == Method::NoiseBand) {
    return fmt::format("OK worst {} {}", where, noise_band_change(*worst));
  }
  if (worst->method == Method::SingleLaunch) {
    return fmt::format(
        "OK worst {} {}\u00d7 ({} CI {}\u2013{}\u00d7, floor {}\u00d7); level {}\u00d7 over {} "
        "records; 1 v 1 launches",
        where, ratio_text(worst->ratio), confidence_text(r.options.alpha),
        ratio_text(worst->ratio_low), ratio_text(worst->ratio_high), ratio_text(worst->floor),
        ratio_text(r.single_launch_level), r.rows.size());
  }
  return fmt::format(
      "OK worst {} {}\u00d7 ({} CI {}\u2013{}\u00d7, floor {}\u00d7); {}; {} v {} launches", where,
      ratio_text(worst->ratio), confidence_text(r.options.alpha), ratio_text(worst->ratio_low),
      ratio_text(worst->ratio_high), ratio_text(worst->floor), level_text(r, false),
      worst->base.runs, worst->next.runs);
}

}  // namespace cb
