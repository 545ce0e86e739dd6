#include "app/check.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "app/output_flags.hpp"
#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "collectives/catalogue/names.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/schema.hpp"
#include "common/stop_line.hpp"
#include "common/units.hpp"
#include "probes/topology.hpp"
#include "report/check/check.hpp"
#include "report/check/check_output.hpp"
#include "report/format/report_format.hpp"
#include "report/format/result_reader.hpp"
#include "report/links/links_verdict.hpp"

namespace cb {

namespace {

template <typename T, typename All, typename Name>
std::string names_of(const All& all, Name name) {
  std::string s;
  for (const T& x : all) s += (s.empty() ? "" : ", ") + std::string(name(x));
  return s;
}

// Collective, dtype and op names as `run` accepts them (aliases allowed), canonicalised.
SpecVocabulary vocabulary() {
  SpecVocabulary v;
  v.collective = [](std::string_view n) -> std::optional<std::string> {
    auto c = parse_collective(n);
    return c ? std::optional<std::string>(std::string(name(*c))) : std::nullopt;
  };
  v.collective_names =
      names_of<CollectiveInfo>(all_collectives(), [](const CollectiveInfo& c) { return c.name; });
  v.dtype = [](std::string_view n) -> std::optional<std::string> {
    auto t = parse_dtype(n);
    return t ? std::optional<std::string>(std::string(info(*t).name)) : std::nullopt;
  };
  v.dtype_names = names_of<DTypeInfo>(all_dtypes(), [](const DTypeInfo& t) { return t.name; });
  v.op = [](std::string_view n) -> std::optional<std::string> {
    if (n == "none") return std::string("none");  // what non-reducing collectives record
    auto op = parse_op(n);
    return op ? std::optional<std::string>(std::string(name(*op))) : std::nullopt;
  };
  v.op_names = names_of<ReduceOp>(all_ops(), [](ReduceOp op) { return name(op); }) + ", none";
  return v;
}

nlohmann::json read_json_file(const std::string& path, const char* option, std::string_view schema,
                              const char* writer) {
  std::ifstream in(path, std::ios::binary);
  if (!in) usage_error("cannot read {} '{}': {}", option, path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    usage_error(
        "{}: not valid JSON (truncated or corrupt near byte {}): expected a {} document "
        "as written by `{}`",
        path, e.byte, schema, writer);
  }
}

// The topology document and where it came from.
std::pair<nlohmann::json, std::string> topology_for(const CheckRequest& rq) {
  if (!rq.topology.empty()) {
    nlohmann::json doc =
        read_json_file(rq.topology, "--topology", kTopologySchema, "commbench topo --format json");
    validate_topology(doc, rq.topology);
    return {doc, rq.topology};
  }
  std::string root = rq.sysfs_root.empty() ? "/sys" : rq.sysfs_root;
  // The probe reads a missing tree as an empty machine; refuse it as `topo` does.
  Sysfs sys(root);
  if (!is_live_sysfs(root) && !sys.resolve("bus/pci/devices") && !sys.resolve("devices/system")) {
    usage_error("--sysfs-root '{}' is not a sysfs tree (no bus/pci/devices or devices/system)",
                root);
  }
  return {probe_topology_json(root), fmt::format("a probe of {}", root)};
}

// --expect, --min-efficiency, --reference and --fleet-fraction: whether and how to judge
// without a spec.
ExpectOptions expect_options(const CheckRequest& rq, bool& expect_auto) {
  expect_auto = rq.expect == "auto";
  if (!rq.expect.empty() && !expect_auto) {
    usage_error("invalid --expect '{}': expected auto", rq.expect);
  }
  ExpectOptions o;
  if (!rq.min_efficiency.empty()) {
    if (!expect_auto) usage_error("--min-efficiency needs --expect auto");
    double v = parse_double(rq.min_efficiency, "--min-efficiency");
    if (!(v > 0)) {
      usage_error("invalid --min-efficiency '{}': expected a fraction > 0", rq.min_efficiency);
    }
    o.min_efficiency = v;
  }
  if (!rq.fleet_fraction.empty()) {
    if (!expect_auto) usage_error("--fleet-fraction needs --expect auto");
    double v = parse_double(rq.fleet_fraction, "--fleet-fraction");
    if (!(v > 0 && v <= 1)) {
      usage_error("invalid --fleet-fraction '{}': expected a fraction in (0, 1]",
                  rq.fleet_fraction);
    }
    o.fleet_fraction = v;
  }
  if (!rq.references.empty() && !expect_auto) usage_error("--reference needs --expect auto");
  for (const auto& path : rq.references) {
    ResultFile f = read_result_file(path);
    require_complete(f, "check");
    for (auto& h : host_references_from(f)) o.references.push_back(std::move(h));
  }
  return o;
}

// The spec, or the empty one --expect auto stands for, and the result files it is judged on
// (with --expect auto a first argument that is not a .toml is a result).
Spec spec_and_results(const CheckRequest& rq, bool expect_auto, std::vector<std::string>& paths) {
  paths = rq.results;
  const bool has_spec = !rq.spec.empty() && (!expect_auto || rq.spec.ends_with(".toml"));
  if (!has_spec && !rq.spec.empty()) paths.insert(paths.begin(), rq.spec);
  if (!has_spec && !expect_auto) usage_error("check needs a SPEC file, or --expect auto");
  if (expect_auto && paths.empty()) usage_error("--expect auto needs result files");
  if (has_spec) return read_spec(rq.spec, vocabulary());
  Spec spec;
  spec.path = "--expect auto";
  spec.name = "expect auto";
  return spec;
}

// The report on stdout, and in --output and --junit when given.
void write_reports(const CheckRequest& rq, const CheckReport& report, const CheckWriter& format,
                   const CheckWriter* file_format) {
  format.write(report, std::cout);
  if (file_format) {
    std::ostringstream text;
    file_format->write(report, text);
    write_file_atomically(rq.output, text.str());
  }
  if (!rq.junit.empty()) {
    std::ostringstream xml;
    write_junit(check_junit_suite(report, utc_now_iso8601(), host_name()), xml);
    write_file_atomically(rq.junit, xml.str());
  }
}

// Exit 5 naming the first failed error-severity requirement.
void fail_on_errors(const CheckReport& report) {
  if (report.failed() == 0) return;
  const RequirementResult* first = nullptr;
  for (const auto& i : report.items) {
    if (!i.passed && i.severity == Severity::Error && !first) first = &i;
  }
  fail(ErrorKind::Regression, "{} requirement{} failed (first: {}: {}, expected {})",
       report.failed(), report.failed() == 1 ? "" : "s", first->name, first->measured,
       first->expected);
}

}  // namespace

const Flags<CheckRequest>& check_flags() {
  using C = CheckRequest;
  static const Flags<C> flags = and_then(
      {value_flag("SPEC", &C::spec,
                  "acceptance spec (TOML): [[results]] and [[topology]] tables (optional with "
                  "--expect auto)"),
       list_flag("RESULTS", &C::results, "result files (.json, .jsonl, .csv) from `run --output`"),
       value_flag("--topology", &C::topology,
                  "commbench/topology/v1 or cluster-topology/v1 document (`topo --format json`) "
                  "instead of probing"),
       value_flag("--links", &C::links,
                  "commbench/links/v2 document (`probe links --format json`) for [[links]] "
                  "tables"),
       value_flag("--sysfs-root", &C::sysfs_root, "probe a captured tree laid out like /sys"),
       value_flag("--junit", &C::junit, "also write JUnit XML: one testcase per requirement"),
       value_flag("--expect", &C::expect,
                  "auto: judge every collective's large-message efficiency against this "
                  "hardware's roof, without a spec"),
       value_flag("--min-efficiency", &C::min_efficiency,
                  "with --expect auto: the efficiency every collective must reach (default: per "
                  "kind of roof, see docs)"),
       one_each_flag("--reference", &C::references,
                     "with --expect auto: a healthy run of this kind of node (`run --repeat N "
                     "--output FILE`) to judge host-memory collectives against; repeatable"),
       value_flag("--fleet-fraction", &C::fleet_fraction,
                  "with --expect auto and several hosts: the fraction of its peers' median each "
                  "host must reach (default 0.75)")},
      report_flags(&C::format, &C::output, kCheckFormats));
  return flags;
}

int check(const CheckRequest& rq) {
  end_with_one_line_on_stop("check");
  const CheckWriter& format = kCheckFormats.named(rq.format);
  const CheckWriter* file_format = nullptr;
  if (!rq.output.empty()) {
    file_format = &kCheckFormats.for_path(rq.output);
    check_output_directory(rq.output);
  }
  if (!rq.junit.empty()) check_output_directory(rq.junit);
  std::vector<NamedFile> inputs = {{rq.spec.ends_with(".toml") ? "SPEC" : "RESULTS", rq.spec},
                                   {"--topology", rq.topology},
                                   {"--links", rq.links}};
  for (const auto& path : rq.results) inputs.push_back({"RESULTS", path});
  for (const auto& path : rq.references) inputs.push_back({"--reference", path});
  check_distinct_files({{"--output", rq.output}, {"--junit", rq.junit}}, inputs);
  if (!rq.topology.empty() && !rq.sysfs_root.empty()) {
    usage_error(
        "--topology and --sysfs-root exclude each other: give a topology document or a "
        "tree to probe");
  }
  bool expect_auto = false;
  const ExpectOptions expect = expect_options(rq, expect_auto);
  std::vector<std::string> result_paths;
  Spec spec = spec_and_results(rq, expect_auto, result_paths);
  std::vector<ResultFile> results;
  for (const auto& path : result_paths) {
    results.push_back(read_result_file(path));
    require_complete(results.back(), "check");
  }
  nlohmann::json topology;
  std::string topology_source;
  if (!spec.topology.empty()) std::tie(topology, topology_source) = topology_for(rq);
  nlohmann::json links;
  if (!spec.links.empty()) {
    if (rq.links.empty()) {
      usage_error("{} has [[links]] requirements: pass --links FILE (`probe links --format json`)",
                  rq.spec);
    }
    links =
        read_json_file(rq.links, "--links", kLinksSchema, "commbench probe links --format json");
  }
  CheckReport report = evaluate_spec(spec, results, topology, topology_source, links, rq.links);
  if (expect_auto) {
    for (auto& item : evaluate_expect_auto(results, expect))
      report.items.push_back(std::move(item));
  }
  write_reports(rq, report, format, file_format);
  fail_on_errors(report);
  return 0;
}

}  // namespace cb
