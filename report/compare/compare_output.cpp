#include "report/compare/compare_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "common/csv.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "report/format/markdown.hpp"

namespace cb {

namespace {

using json = nlohmann::ordered_json;  // "schema" first

std::string percent(double fraction) {
  return percent_change(fraction);
}

// The p50-based change, in the same direction as `change` (busbw up is positive).
double p50_change(const Comparison& c) {
  return c.metric == Metric::Busbw ? -c.median_worse : c.median_worse;
}

std::string value(const Comparison& c, double v) {
  return c.metric == Metric::Busbw ? fmt::format("{:.3g} GB/s", v) : format_time_us(v);
}

std::string root_text(int root) {
  return root < 0 ? "-" : std::to_string(root);
}

std::string size_text(const RecordKey& k) {
  return k.collective == "barrier" ? "-" : format_size(k.bytes);
}

// "alltoallv zipf:1.2": the collective and, for alltoallv, its split.
std::string collective_text(const RecordKey& k) {
  return k.split.empty() ? k.collective : k.collective + " " + k.split;
}

std::string rule(const CompareOptions& o) {
  return fmt::format(
      "over launches, on log p50 times: shape test (each record against its launch's median "
      "record, Welch's t, {:g} % family-wise) regresses where the lower bound of the ratio "
      "exceeds {:g}x (or the record's own night-to-night threshold, with a history of {} or "
      "more nights); level test (each launch's geometric mean, over launches whose control "
      "agrees) where it exceeds {:g}x; with one launch on a side: worse by more than {:g}% and "
      "the noise band ({:g} x max (p99-p50)/p50), with p50 agreeing; time shown below {}, busbw "
      "from {}",
      (1 - o.alpha) * 100, 1 + o.threshold, kHistoryNights, 1 + o.level_threshold,
      o.threshold * 100, o.noise_factor, format_size(o.latency_bytes),
      format_size(o.latency_bytes));
}

// The shape test's ratio and its bounds, "3.00 (2.71-3.32)"; "-" for the noise-band rule.
std::string ratio_cell(const Comparison& c) {
  if (c.method == Method::NoiseBand) return "-";
  return fmt::format("{:.2f} ({:.2f}-{:.2f})", c.ratio, c.ratio_low, c.ratio_high);
}

std::string floor_cell(const Comparison& c) {
  return fmt::format("{:.2f}{}", c.floor, c.floor_from_history ? "h" : "");
}

const char* outcome_name(CompareOutcome o) {
  switch (o) {
    case CompareOutcome::Regression:
      return "regression";
    case CompareOutcome::Inconclusive:
      return "inconclusive";
    case CompareOutcome::Invalid:
      return "invalid";
    case CompareOutcome::Ok:
      return "ok";
  }
  return "ok";
}

std::string runs_text(const Comparison& c) {
  return fmt::format("{}/{}", c.base.runs, c.next.runs);
}

std::string support_text(const Comparison& c) {
  return c.verdict == Verdict::Regression || c.verdict == Verdict::Improvement
             ? fmt::format("{}/2", c.support)
             : std::string("-");
}

// The level test's result, one line.
std::string level_line(const CompareReport& r) {
  const LevelTest& l = r.level;
  if (!l.matched) return "level test: not judged: " + l.why;
  if (l.verdict.change == Change::Inconclusive) return "level test: not judged: " + l.verdict.why;
  return fmt::format(
      "level test: geometric mean new/base {:.3f} ({:g} % CI {:.3f}-{:.3f}, floor {:.2f}) over {} "
      "v {} launches{}: {}",
      l.verdict.ratio, (1 - r.options.alpha) * 100, l.verdict.low, l.verdict.high, l.floor,
      l.verdict.reference_launches, l.verdict.candidate_launches,
      l.gated ? fmt::format(" whose control agrees (of {} v {})", l.base_launches, l.new_launches)
              : std::string(" (no control measured)"),
      change_name(l.verdict.change));
}

}  // namespace

void write_compare_table(const CompareReport& r, std::ostream& out) {
  out << r.headline << "\n";
  out << fmt::format("# commbench compare: {} (base) -> {} (new)\n", r.base_path, r.new_path);
  out << "# " << rule(r.options) << "\n";
  TextTable t;
  using A = TextTable::Align;
  t.set_header({"collective", "backend",    "algorithm", "dtype", "op",   "place",  "root",
                "ranks",      "size",       "metric",    "base",  "new",  "change", "p50 chg",
                "noise",      "ratio (CI)", "floor",     "reps",  "nbrs", "status"},
               {A::Left,  A::Left,  A::Left,  A::Left,  A::Left,  A::Left,  A::Right,
                A::Right, A::Right, A::Left,  A::Right, A::Right, A::Right, A::Right,
                A::Right, A::Right, A::Right, A::Right, A::Right, A::Left});
  for (const Comparison* c : r.ordered()) {
    const RecordKey& k = c->key;
    t.add_row({collective_text(k),
               k.backend,
               k.algorithm,
               k.dtype,
               k.op,
               k.placement,
               root_text(k.root),
               std::to_string(k.nranks),
               size_text(k),
               metric_name(c->metric),
               value(*c, c->base.value),
               value(*c, c->next.value),
               percent(c->change),
               percent(p50_change(*c)),
               fmt::format("{:.1f}%", c->noise * 100),
               ratio_cell(*c),
               floor_cell(*c),
               runs_text(*c),
               support_text(*c),
               c->verdict == Verdict::Regression ? "REGRESSION" : verdict_name(c->verdict)});
  }
  if (!t.empty()) {
    out << "#\n";
    t.print(out, "# ");
  }
  for (const auto& k : r.base_only) out << "# only in base: " << describe(k) << "\n";
  for (const auto& k : r.new_only) out << "# only in new: " << describe(k) << "\n";
  if (r.level.judged) out << "# " << level_line(r) << "\n";
  for (const auto& w : r.warnings) out << "# warning: " << w << "\n";
  for (const auto& n : r.notes) out << "# note: " << n << "\n";
  out << "# " << r.summary() << "\n" << std::flush;
}

void write_compare_csv(const CompareReport& r, std::ostream& out) {
  out << csv_line({"collective", "backend",    "algorithm",  "dtype",          "op",
                   "placement",  "root",       "nranks",     "bytes",          "metric",
                   "base",       "new",        "change_pct", "p50_change_pct", "noise_pct",
                   "base_runs",  "new_runs",   "status",     "method",         "ratio",
                   "ratio_low",  "ratio_high", "floor",      "support",        "split"})
      << "\r\n";
  auto key_fields = [](const RecordKey& k) {
    return std::vector<std::string>{k.collective,
                                    k.backend,
                                    k.algorithm,
                                    k.dtype,
                                    k.op,
                                    k.placement,
                                    std::to_string(k.root),
                                    std::to_string(k.nranks),
                                    std::to_string(k.bytes)};
  };
  auto num = [](double v) { return fmt::format("{:.6g}", v); };
  for (const Comparison* c : r.ordered()) {
    auto f = key_fields(c->key);
    f.insert(f.end(),
             {metric_name(c->metric), num(c->base.value), num(c->next.value), num(c->change * 100),
              num(p50_change(*c) * 100), num(c->noise * 100), std::to_string(c->base.runs),
              std::to_string(c->next.runs), verdict_name(c->verdict), method_name(c->method),
              c->method != Method::NoiseBand ? num(c->ratio) : std::string(),
              c->method != Method::NoiseBand ? num(c->ratio_low) : std::string(),
              c->method != Method::NoiseBand ? num(c->ratio_high) : std::string(), num(c->floor),
              std::to_string(c->support), c->key.split});
    out << csv_line(f) << "\r\n";
  }
  for (const auto* list : {&r.base_only, &r.new_only}) {
    for (const auto& k : *list) {
      auto f = key_fields(k);
      f.resize(f.size() + 8);
      f.push_back(list == &r.base_only ? "base_only" : "new_only");
      f.resize(f.size() + 6);
      f.push_back(k.split);
      out << csv_line(f) << "\r\n";
    }
  }
  out << std::flush;
}

namespace {

json key_json(const RecordKey& k) {
  json j = {{"collective", k.collective},
            {"backend", k.backend},
            {"algorithm", k.algorithm},
            {"dtype", k.dtype},
            {"op", k.op},
            {"placement", k.placement},
            {"root", k.root},
            {"nranks", k.nranks},
            {"bytes", k.bytes}};
  if (!k.split.empty()) j["split"] = k.split;
  return j;
}

json side_json(const Side& s) {
  return {{"value", s.value},   {"p50_us", s.p50_us},
          {"p99_us", s.p99_us}, {"cv", s.cv},
          {"spread", s.spread}, {"runs", s.runs},
          {"values", s.values}, {"outlier_runs", s.outlier_runs}};
}

json level_json(const LevelTest& l) {
  if (!l.judged) return nullptr;
  return {{"gated", l.gated},
          {"matched", l.matched},
          {"change", change_name(l.verdict.change)},
          {"ratio", l.verdict.ratio},
          {"ratio_low", l.verdict.low},
          {"ratio_high", l.verdict.high},
          {"floor", l.floor},
          {"base_launches", l.base_launches},
          {"new_launches", l.new_launches},
          {"base_launches_used", l.verdict.reference_launches},
          {"new_launches_used", l.verdict.candidate_launches},
          {"why", l.why}};
}

// The single-launch rule's records: how many, their level and why undecided.
json single_launch_json(const CompareReport& r) {
  const int n = static_cast<int>(std::count_if(r.rows.begin(), r.rows.end(), [](const auto& c) {
    return c.method == Method::SingleLaunch;
  }));
  if (n == 0) return nullptr;
  return {{"records", n},
          {"level", r.single_launch_level},
          {"level_regression", r.single_launch_level_regression},
          {"why", r.single_launch_why}};
}

}  // namespace

void write_compare_json(const CompareReport& r, std::ostream& out) {
  json doc = {{"schema", kCompareSchema},
              {"base", r.base_path},
              {"new", r.new_path},
              {"settings",
               {{"threshold_pct", r.options.threshold * 100},
                {"noise_factor", r.options.noise_factor},
                {"latency_bytes", r.options.latency_bytes},
                {"fail_on_missing", r.options.fail_on_missing},
                {"alpha", r.options.alpha},
                {"level_threshold_pct", r.options.level_threshold * 100},
                {"history_nights", r.history_nights},
                {"test",
                 "shape: Welch's t on log p50 times minus the launch median, Bonferroni; "
                 "level: Welch's t on the launches' log geometric means, control-gated; one "
                 "launch a side: each median's own interval and the launches' scatter, a "
                 "neighbouring size in support, control-gated"}}},
              {"verdict", {{"outcome", outcome_name(r.outcome)}, {"line", r.headline}}},
              {"level", level_json(r.level)},
              {"single_launch", single_launch_json(r)},
              {"summary",
               {{"compared", r.rows.size()},
                {"regressions", r.count(Verdict::Regression)},
                {"improvements", r.count(Verdict::Improvement)},
                {"noise", r.count(Verdict::Noise)},
                {"unchanged", r.count(Verdict::Unchanged)},
                {"base_only", r.base_only.size()},
                {"new_only", r.new_only.size()},
                {"failed", r.regressions() > 0 || r.outcome == CompareOutcome::Invalid}}},
              {"warnings", r.warnings},
              {"notes", r.notes},
              {"comparisons", json::array()},
              {"base_only", json::array()},
              {"new_only", json::array()}};
  for (const Comparison* c : r.ordered()) {
    json row = key_json(c->key);
    row["metric"] = metric_name(c->metric);
    row["unit"] = c->metric == Metric::Busbw ? "GB/s" : "us";
    row["base"] = side_json(c->base);
    row["new"] = side_json(c->next);
    row["change_pct"] = c->change * 100;
    row["p50_change_pct"] = p50_change(*c) * 100;
    row["noise_pct"] = c->noise * 100;
    row["method"] = method_name(c->method);
    const bool shape = c->method != Method::NoiseBand;
    row["ratio"] = shape ? json(c->ratio) : json(nullptr);
    row["ratio_low"] = shape ? json(c->ratio_low) : json(nullptr);
    row["ratio_high"] = shape ? json(c->ratio_high) : json(nullptr);
    row["floor"] = c->floor;
    row["floor_from_history"] = c->floor_from_history;
    row["support"] = c->support;
    row["status"] = verdict_name(c->verdict);
    doc["comparisons"].push_back(row);
  }
  for (const auto& k : r.base_only) doc["base_only"].push_back(key_json(k));
  for (const auto& k : r.new_only) doc["new_only"].push_back(key_json(k));
  out << doc.dump(1) << "\n" << std::flush;
}

namespace {

void md_rows(MarkdownTable& t, const std::vector<const Comparison*>& rows) {
  using A = MarkdownTable::Align;
  t.set_header(
      {"collective", "backend/algorithm", "dtype", "op", "placement", "root", "ranks", "size",
       "metric", "base", "new", "change", "p50 change", "noise", "ratio (CI)", "reps", "status"},
      {A::Left, A::Left, A::Left, A::Left, A::Left, A::Right, A::Right, A::Right, A::Left, A::Right,
       A::Right, A::Right, A::Right, A::Right, A::Right, A::Right, A::Left});
  for (const Comparison* c : rows) {
    const RecordKey& k = c->key;
    bool bad = c->verdict == Verdict::Regression;
    auto strong = [bad](std::string s) { return bad ? "**" + s + "**" : s; };
    t.add_row({md_escape(collective_text(k)), md_escape(k.backend + "/" + k.algorithm),
               md_escape(k.dtype), md_escape(k.op), md_escape(k.placement), root_text(k.root),
               std::to_string(k.nranks), size_text(k), metric_name(c->metric),
               value(*c, c->base.value), value(*c, c->next.value), strong(percent(c->change)),
               percent(p50_change(*c)), fmt::format("{:.1f}%", c->noise * 100), ratio_cell(*c),
               runs_text(*c), strong(verdict_name(c->verdict))});
  }
}

}  // namespace

void write_compare_md(const CompareReport& r, std::ostream& out) {
  int regressions = r.count(Verdict::Regression);
  out << "### " << md_escape(r.headline) << "\n\n";
  out << fmt::format(
      "{} (base) → {} (new): {} compared · {} regression{} · {} improvement{} · "
      "{} within noise · {} unchanged · {} only in base · {} only in new\n\n",
      md_code(r.base_path), md_code(r.new_path), r.rows.size(), regressions,
      regressions == 1 ? "" : "s", r.count(Verdict::Improvement),
      r.count(Verdict::Improvement) == 1 ? "" : "s", r.count(Verdict::Noise),
      r.count(Verdict::Unchanged), r.base_only.size(), r.new_only.size());
  if (r.level.judged) out << md_escape(level_line(r)) << "\n\n";
  for (const auto& w : r.warnings) out << "> **Warning:** " << md_escape(w) << "\n>\n";
  if (!r.warnings.empty()) out << "\n";
  std::vector<const Comparison*> changed, unchanged;
  for (const Comparison* c : r.ordered()) {
    (c->verdict == Verdict::Unchanged ? unchanged : changed).push_back(c);
  }
  if (!changed.empty()) {
    MarkdownTable t;
    md_rows(t, changed);
    t.print(out);
    out << "\n";
  }
  if (!unchanged.empty()) {
    out << fmt::format("<details><summary>{} unchanged</summary>\n\n", unchanged.size());
    MarkdownTable t;
    md_rows(t, unchanged);
    t.print(out);
    out << "\n</details>\n\n";
  }
  for (const auto* list : {&r.base_only, &r.new_only}) {
    if (list->empty()) continue;
    out << (list == &r.base_only ? "**Only in base:**\n\n" : "**Only in new:**\n\n");
    for (const auto& k : *list) out << "- " << md_escape(describe(k)) << "\n";
    out << "\n";
  }
  for (const auto& n : r.notes) out << "Note: " << md_escape(n) << "\n\n";
  out << "<sub>" << md_escape(rule(r.options)) << ".</sub>\n" << std::flush;
}

std::string percent_change(double fraction) {
  double p = std::round(fraction * 1000) / 10;
  if (p > 1000) return ">+1000%";
  if (p < -1000) return "<-1000%";
  return fmt::format("{:+.1f}%", p == 0 ? 0.0 : p);  // no "-0.0%"
}

}  // namespace cb
