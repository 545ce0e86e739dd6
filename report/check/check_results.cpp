// Result requirements: every matched measurement against the spec's limits on busbw, time and
// p99, and no wrong elements. Over repetitions a figure is the geometric mean over launches (each
// launch one sample), and a shortfall says whether it is beyond the launches' noise (its 99 %
// confidence interval wholly on the wrong side of the limit) or within it.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

#include "common/units.hpp"
#include "report/check/check_rules.hpp"
#include "report/launch_statistics.hpp"
#include "report/record_key.hpp"
#include "report/repetitions.hpp"
#include "report/roof/roof.hpp"

namespace cb {

namespace {

struct Sourced {
  const ResultRecord* record;  // the summary: figures are geometric means over the launches
  const std::string* file;
  std::vector<ResultRecord> launches;  // one per launch (the record itself for a single launch)
};

// The limit's figure over the launches: geometric mean and 99 % interval.
GeometricInterval over_launches(const Sourced& s,
                                std::optional<double> (*figure)(const ResultRecord&)) {
  std::vector<double> v;
  for (const auto& l : s.launches) {
    if (auto x = figure(l)) v.push_back(*x);
  }
  return geometric_interval(v, 0.99);
}

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
  if (q.min_efficiency) {
    out.push_back({"efficiency", true, *q.min_efficiency,
                   [](double v) { return fmt::format("{:.2f}", v); },
                   [](const ResultRecord& r) { return r.efficiency; }});
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
      std::string noise;
      if (s.launches.size() > 1) {
        GeometricInterval g = over_launches(s, limit.figure);
        const bool beyond = limit.at_least ? g.high < limit.bound : g.low > limit.bound;
        noise = fmt::format(" ({} launches, 99 % CI {}-{}: {})", g.launches, limit.format(g.low),
                            limit.format(g.high),
                            beyond ? "beyond their noise"
                                   : "within their noise: more launches (--repeat) can tell");
      }
      add_detail(out, fmt::format("{} {} at {}{}", limit.what, limit.format(*v), where(s), noise));
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

// The launches' summary with busbw, time and p99 the geometric means over the launches.
ResultRecord geometric_summary(const std::vector<ResultRecord>& launches) {
  ResultRecord r = summarize_repetitions(launches);
  Sourced s{&r, nullptr, launches};
  auto mean = [&](std::optional<double> (*figure)(const ResultRecord&)) {
    return over_launches(s, figure).mean;
  };
  if (r.busbw_GBps) r.busbw_GBps = mean([](const ResultRecord& x) { return x.busbw_GBps; });
  r.time_us = mean([](const ResultRecord& x) { return std::optional<double>(x.time_us); });
  r.p99_us = mean([](const ResultRecord& x) { return std::optional<double>(x.p99_us); });
  return r;
}

}  // namespace

RequirementResult evaluate_results(const ResultRequirement& q,
                                   const std::vector<ResultFile>& files) {
  RequirementResult out = result_for(q, "results");
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
      medians.push_back(g.size() == 1 ? g.front() : geometric_summary(g));
      apply_roof(medians.back(), f.meta_json.is_object() ? f.meta_json.value("topology", nlohmann::json())
                                                         : nlohmann::json());
      matched.push_back({&medians.back(), &f.path, g});
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
                           ? fmt::format(", each the geometric mean of {} launches", most)
                           : fmt::format(", each the geometric mean of {}-{} launches", fewest,
                                         most);
  }
  for (const auto& m : measured) out.measured += (out.measured.empty() ? "" : "; ") + m;
  if (shortfalls > out.details.size()) {
    out.details.push_back(fmt::format("... and {} more", shortfalls - out.details.size()));
  }
  out.passed = shortfalls == 0;
  return out;
}

}  // namespace cb
