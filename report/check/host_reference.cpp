#include "report/check/host_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/error.hpp"
#include "common/launch_control.hpp"
#include "common/median.hpp"
#include "common/units.hpp"
#include "report/repetitions.hpp"

namespace cb {

using nlohmann::json;

// The table compiled in (generated from report/check/host_references.json).
extern const char* const kBuiltinHostReferencesJson;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

json first_host_facts(const ResultFile& f) {
  if (!f.meta_json.is_object()) return nullptr;
  auto t = f.meta_json.find("topology");
  if (t == f.meta_json.end() || !t->is_object()) return nullptr;
  auto facts = t->find("roof_facts");
  if (facts == t->end() || !facts->is_object() || facts->empty()) return nullptr;
  return facts->begin().value();
}

LaunchConditions conditions_of(const LaunchControl& c) {
  return {c.pingpong_ns(),   c.compute_us(), c.pingpong_moved(),
          c.compute_moved(), c.load_average, c.steal_fraction};
}

std::string size_range(std::uint64_t lo, std::uint64_t hi) {
  return lo == hi ? format_size(lo) : format_size(lo) + "-" + format_size(hi);
}

std::string figure(double v) {
  return v >= 0.1 ? fmt::format("{:.2f}", v) : fmt::format("{:.2g}", v);
}

}  // namespace

ReferenceCase reference_case_of(const ResultRecord& r) {
  return {r.collective, r.algorithm, r.dtype, r.op, r.placement, r.root, r.bytes, r.split};
}

MachineOf machine_of(const ResultFile& f) {
  const json facts = first_host_facts(f);
  MachineOf m;
  if (!facts.is_object()) return m;
  if (auto it = facts.find("cpu_model"); it != facts.end() && it->is_string()) m.cpu_model = *it;
  if (auto it = facts.find("cpus"); it != facts.end() && it->is_number()) m.cpus = *it;
  return m;
}

LaunchConditions conditions_of(const ResultFile& f) {
  if (!f.meta || f.meta->launches.empty()) return {};
  std::vector<double> pp, cu, load, steal;
  LaunchConditions out;
  for (const auto& c : f.meta->launches) {
    pp.push_back(c.pingpong_ns());
    cu.push_back(c.compute_us());
    load.push_back(c.load_average);
    steal.push_back(c.steal_fraction);
    out.pingpong_moved = std::max(out.pingpong_moved, c.pingpong_moved());
    out.compute_moved = std::max(out.compute_moved, c.compute_moved());
  }
  out.pingpong_ns = median_of(pp);
  out.compute_us = median_of(cu);
  out.load_average = median_of(load);
  out.steal_fraction = median_of(steal);
  return out;
}

std::vector<HostReference> host_references_from(const ResultFile& f) {
  if (!f.meta || f.meta->launches.empty()) {
    usage_error(
        "{}: a reference needs the run's control measurement (a JSON result file of "
        "`commbench run`, not {})",
        f.path, f.format);
  }
  if (f.meta->hosts.size() > 1) {
    usage_error("{}: a reference comes from one host; this file has {}", f.path,
                f.meta->hosts.size());
  }
  const MachineOf machine = machine_of(f);
  if (machine.cpu_model.empty()) {
    usage_error(
        "{}: no CPU model in its meta.topology.roof_facts (written by an older commbench): "
        "measure the reference again",
        f.path);
  }
  // Launch index by repetition, in meta order.
  std::map<int, std::size_t> launch_of;
  std::vector<LaunchConditions> launches;
  for (const auto& c : f.meta->launches) {
    launch_of[c.repeat.value_or(0)] = launches.size();
    launches.push_back(conditions_of(c));
  }
  std::vector<HostReference> out;
  for (const auto& r : f.records) {
    if (r.collective == "barrier" || r.nnodes > 1) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const HostReference& h) {
      return h.backend == r.backend && h.library == r.library && h.nranks == r.nranks;
    });
    if (it == out.end()) {
      HostReference h;
      h.source = f.path;
      h.cpu_model = machine.cpu_model;
      h.cpus = machine.cpus;
      h.backend = r.backend;
      h.library = r.library;
      h.nranks = r.nranks;
      h.launches = launches;
      out.push_back(std::move(h));
      it = std::prev(out.end());
    }
    auto& figures = it->busbw[reference_case_of(r)];
    figures.assign(launches.size(), kNaN);
    for (const auto& launch : launches_of(r)) {
      auto l = launch_of.find(launch.repeat.value_or(0));
      if (l != launch_of.end() && launch.busbw_GBps) figures[l->second] = *launch.busbw_GBps;
    }
  }
  return out;
}

std::vector<HostReference> parse_host_references(const json& doc, const std::string& source) {
  if (!doc.is_object() || doc.value("schema", "") != "commbench/host-references/v1" ||
      !doc.contains("references") || !doc["references"].is_array()) {
    usage_error("{}: not a commbench/host-references/v1 document", source);
  }
  std::vector<HostReference> out;
  try {
    for (const auto& e : doc["references"]) {
      HostReference h;
      h.source = fmt::format("{} ({}, {})", source, e.value("measured", std::string("?")),
                             e.value("note", std::string("measured")));
      h.cpu_model = e.at("machine").at("cpu_model").get<std::string>();
      h.cpus = e.at("machine").at("cpus").get<int>();
      h.backend = e.at("backend").get<std::string>();
      h.library = e.at("library").get<std::string>();
      h.nranks = e.at("nranks").get<int>();
      for (const auto& l : e.at("launches")) {
        LaunchConditions c;
        c.pingpong_ns = l.at("pingpong_ns").get<double>();
        c.compute_us = l.at("compute_us").get<double>();
        c.load_average = l.value("load_average", 0.0);
        c.steal_fraction = l.value("steal_fraction", 0.0);
        h.launches.push_back(c);
      }
      for (const auto& c : e.at("cases")) {
        ReferenceCase k{
            c.at("collective").get<std::string>(),    c.value("algorithm", std::string("default")),
            c.at("dtype").get<std::string>(),         c.at("op").get<std::string>(),
            c.value("placement", std::string("out")), c.value("root", -1),
            c.at("bytes").get<std::uint64_t>(),       c.value("split", std::string())};
        std::vector<double> v;
        for (const auto& x : c.at("busbw_GBps"))
          v.push_back(x.is_number() ? x.get<double>() : kNaN);
        if (v.size() != h.launches.size()) {
          usage_error("{}: {} at {} has {} figures for {} launches", source, k.collective, k.bytes,
                      v.size(), h.launches.size());
        }
        h.busbw[k] = std::move(v);
      }
      out.push_back(std::move(h));
    }
  } catch (const json::exception& e) {
    usage_error("{}: malformed host reference: {}", source, e.what());
  }
  return out;
}

const std::vector<HostReference>& builtin_host_references() {
  static const std::vector<HostReference> table =
      parse_host_references(json::parse(kBuiltinHostReferencesJson), "built-in references");
  return table;
}

HostJudgement judge_against_references(const std::vector<const ResultRecord*>& records,
                                       const MachineOf& machine, const LaunchConditions& run,
                                       const std::vector<HostReference>& references) {
  HostJudgement out;
  if (records.empty()) return out;
  const ResultRecord& first = *records.front();
  const std::string& collective = first.collective;
  const std::string what = fmt::format(
      "{} {} at {} ranks on this machine ({}, {} CPUs)", first.library, collective, first.nranks,
      machine.cpu_model.empty() ? "CPU model unknown" : machine.cpu_model, machine.cpus);
  const std::string measure = fmt::format(
      "measure one on a healthy node (`commbench run -B {} -N {} -c {} -b 16M -e 64M --repeat 10 "
      "--output ref.json`) and pass --reference ref.json",
      first.backend, first.nranks, collective);
  // The reference of this library on this kind of machine, with this collective's sizes.
  const HostReference* ref = nullptr;
  const HostReference* same_machine = nullptr;
  std::vector<const ResultRecord*> judged;  // the largest sizes it has, up to three
  for (const auto& h : references) {
    if (h.backend != first.backend || h.library != first.library || h.nranks != first.nranks ||
        h.cpu_model != machine.cpu_model || h.cpus != machine.cpus) {
      continue;
    }
    same_machine = &h;
    std::vector<const ResultRecord*> common;
    for (const auto* r : records) {
      if (h.busbw.count(reference_case_of(*r)) && r->busbw_GBps && *r->busbw_GBps > 0) {
        common.push_back(r);
      }
    }
    if (common.size() > judged.size() || (!ref && !common.empty())) {
      ref = &h;
      judged = std::move(common);
    }
  }
  if (!ref) {
    out.measured = same_machine
                       ? fmt::format(
                             "not judged: the healthy reference for {} ({}) has none of this run's "
                             "sizes: {}",
                             what, same_machine->source, measure)
                       : fmt::format("not judged: no healthy reference for {}: {}", what, measure);
    return out;
  }
  std::stable_sort(judged.begin(), judged.end(),
                   [](const auto* a, const auto* b) { return a->bytes > b->bytes; });
  std::set<std::uint64_t> sizes;
  std::vector<const ResultRecord*> top;
  for (const auto* r : judged) {
    if (sizes.size() == 3 && !sizes.count(r->bytes)) continue;
    sizes.insert(r->bytes);
    top.push_back(r);
  }
  const std::string where = size_range(*sizes.begin(), *sizes.rbegin());
  // The judged launch must be what the reference launches were: the same machine mode, steady,
  // not busier, not disturbed.
  if (run.pingpong_ns <= 0 || run.compute_us <= 0) {
    out.measured = fmt::format(
        "not judged: no control measurement in this file (CSV, or written before it): a reference "
        "measured in one mode of the machine cannot judge a launch in another");
    return out;
  }
  if (run.pingpong_moved > kPingpongTolerance || run.compute_moved > kComputeTolerance) {
    out.measured = fmt::format(
        "not judged: the machine changed during this launch (core-to-core round trip {:.1f}x, "
        "compute loop {:.2f}x apart between its control samples): rerun",
        run.pingpong_moved, run.compute_moved);
    return out;
  }
  // Only quiet launches are judged, and only against quiet reference launches: a reference
  // measured on a busy host is low, and would pass a quiet node twice as slow.
  const double quiet_load = kQuietLoadPerCpu * std::max(1, machine.cpus);
  if (run.load_average > quiet_load) {
    out.measured = fmt::format(
        "not judged: the host was busy (load average {:.1f} at the launch's start on {} CPUs; "
        "judged up to {:g}): rerun on a quiet host",
        run.load_average, machine.cpus, quiet_load);
    return out;
  }
  if (run.steal_fraction > kMaxStealFraction) {
    out.measured = fmt::format(
        "not judged: the hypervisor took {:.0f} % of the CPU time during the launch (judged up to "
        "{:g} %): rerun",
        run.steal_fraction * 100, kMaxStealFraction * 100);
    return out;
  }
  std::vector<std::size_t> agree;
  std::vector<double> ref_pp, ref_cu;
  int quiet = 0;
  for (std::size_t i = 0; i < ref->launches.size(); ++i) {
    const LaunchConditions& l = ref->launches[i];
    if (l.load_average > kQuietLoadPerCpu * std::max(1, ref->cpus) ||
        l.steal_fraction > kMaxStealFraction) {
      continue;
    }
    ++quiet;
    ref_pp.push_back(l.pingpong_ns);
    ref_cu.push_back(l.compute_us);
    const double fp = run.pingpong_ns / l.pingpong_ns, fc = run.compute_us / l.compute_us;
    if (std::max(fp, 1 / fp) <= kPingpongTolerance && std::max(fc, 1 / fc) <= kComputeTolerance) {
      agree.push_back(i);
    }
  }
  out.launches = static_cast<int>(agree.size());
  if (quiet < kMinReferenceLaunches) {
    out.measured = fmt::format(
        "not judged: {} of the reference's {} launches ran on a quiet host (load average up to "
        "{:g} per CPU), fewer than {}: measure the reference again on a quiet host",
        quiet, ref->launches.size(), kQuietLoadPerCpu, kMinReferenceLaunches);
    return out;
  }
  if (static_cast<int>(agree.size()) < kMinReferenceLaunches) {
    out.measured = fmt::format(
        "not judged: this launch's control (core-to-core round trip {:.0f} ns, compute loop {:.0f} "
        "us) agrees with {} of the reference's {} quiet launches (round trip {:.0f}-{:.0f} ns, "
        "compute {:.0f}-{:.0f} us), fewer than {}: the machine ran in another mode than the "
        "reference saw; rerun, or measure a reference in this mode",
        run.pingpong_ns, run.compute_us, agree.size(), quiet,
        *std::min_element(ref_pp.begin(), ref_pp.end()),
        *std::max_element(ref_pp.begin(), ref_pp.end()),
        *std::min_element(ref_cu.begin(), ref_cu.end()),
        *std::max_element(ref_cu.begin(), ref_cu.end()), kMinReferenceLaunches);
    return out;
  }
  // Each size against the median of the agreeing reference launches; the launch's figure is the
  // geometric mean of its ratios, as is each reference launch's own.
  double log_sum = 0, run_gbps = 0, ref_gbps = 0;
  std::vector<double> healthy(ref->launches.size(), 0.0);
  std::vector<int> counted(ref->launches.size(), 0);
  for (const auto* r : top) {
    const std::vector<double>& v = ref->busbw.at(reference_case_of(*r));
    std::vector<double> agreeing;
    for (std::size_t i : agree) {
      if (std::isfinite(v[i]) && v[i] > 0) agreeing.push_back(v[i]);
    }
    if (agreeing.empty()) continue;
    const double median = median_of(agreeing);
    log_sum += std::log(*r->busbw_GBps / median);
    run_gbps += *r->busbw_GBps;
    ref_gbps += median;
    for (std::size_t i : agree) {
      if (std::isfinite(v[i]) && v[i] > 0) healthy[i] += std::log(v[i] / median), ++counted[i];
    }
  }
  std::vector<double> ratios;
  for (std::size_t i : agree) {
    if (counted[i] > 0) ratios.push_back(std::exp(healthy[i] / counted[i]));
  }
  if (ratios.size() < static_cast<std::size_t>(kMinReferenceLaunches) || ref_gbps <= 0) {
    out.measured = fmt::format("not judged: the reference has too few launches with {} at {}",
                               collective, where);
    return out;
  }
  out.ratio = std::exp(log_sum / static_cast<double>(top.size()));
  out.healthy_low = *std::min_element(ratios.begin(), ratios.end());
  out.healthy_high = *std::max_element(ratios.begin(), ratios.end());
  const std::string figures = fmt::format(
      "{}: busbw {} GB/s at {}, {} of the healthy reference's {} GB/s ({} at {} ranks on {} x {}, "
      "{} launches whose control agrees with this launch's; {})",
      collective, figure(run_gbps / static_cast<double>(top.size())), where, figure(out.ratio),
      figure(ref_gbps / static_cast<double>(top.size())), ref->library, ref->nranks, ref->cpu_model,
      ref->cpus, agree.size(), ref->source);
  if (out.healthy_high / out.healthy_low > kMaxHealthySpread) {
    out.measured = fmt::format(
        "not judged: {}; but the healthy launches themselves reached {}-{} of it ({:.1f}x apart, "
        "more than {:g}x): on this machine a node twice as slow cannot be told from them",
        figures, figure(out.healthy_low), figure(out.healthy_high),
        out.healthy_high / out.healthy_low, kMaxHealthySpread);
    return out;
  }
  // Between the lowest healthy launch and half the highest, geometrically in the middle: as far
  // from failing a healthy launch as from passing one twice as slow.
  out.threshold = std::sqrt(out.healthy_low * out.healthy_high / 2);
  out.judged = true;
  out.passed = out.ratio >= out.threshold;
  out.measured = figures;
  out.expected = fmt::format(
      ">= {} of the reference: its healthy launches reached {}-{} of it, and a node twice as "
      "slow as the fastest of them {}{}",
      figure(out.threshold), figure(out.healthy_low), figure(out.healthy_high),
      figure(out.healthy_high / 2),
      out.passed ? "" : fmt::format(": {} is beyond their noise", figure(out.ratio)));
  return out;
}

}  // namespace cb
