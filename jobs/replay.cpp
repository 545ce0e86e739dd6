#include "jobs/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "collectives/catalogue/names.hpp"
#include "collectives/launch/job.hpp"
#include "collectives/launch/process_start.hpp"
#include "collectives/launch/progress.hpp"
#include "collectives/patterns/ddp_buckets.hpp"
#include "collectives/patterns/presets.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/invocation.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "jobs/job_sweep.hpp"
#include "jobs/run.hpp"
#include "report/replay_verdict.hpp"
#include "report/report_format.hpp"

namespace cb {

namespace {

// At most this many bucket caps in one sweep.
constexpr std::size_t kMaxCaps = 64;

std::string preset_names() {
  std::string s;
  for (const auto& p : model_presets()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

Model replay_model(const ReplayRequest& pq) {
  if (!pq.model.empty() && !pq.preset.empty()) {
    usage_error("--model and --preset both name the model: give one");
  }
  if (pq.model.empty() && pq.preset.empty()) {
    usage_error("no model: give --model FILE.csv or --preset NAME ({})", preset_names());
  }
  Model m;
  if (!pq.preset.empty()) {
    auto p = preset_model(pq.preset);
    if (!p) usage_error("unknown --preset '{}': expected one of {}", pq.preset, preset_names());
    m = std::move(*p);
  } else {
    m = read_model_csv(pq.model);
  }
  if (!pq.param_dtype.empty()) {
    auto t = parse_param_dtype(pq.param_dtype);
    if (!t) usage_error("unknown --param-dtype '{}'", pq.param_dtype);
    for (auto& p : m.params) p.dtype = *t;
  }
  return m;
}

double parse_mb(const std::string& text, const char* what) {
  const double mb = parse_double(text, what);
  ddp_bucket_bytes(mb, what);  // checks it
  return mb;
}

std::vector<double> parse_caps(const std::string& text) {
  if (text.empty()) return {kDdpBucketCapMb};
  std::vector<double> caps;
  for (const auto& item : split_list(text)) {
    const double mb = parse_mb(item, "--bucket-cap-mb");
    if (std::find(caps.begin(), caps.end(), mb) != caps.end()) {
      usage_error("--bucket-cap-mb lists {:g} twice", mb);
    }
    caps.push_back(mb);
  }
  if (caps.empty()) usage_error("empty --bucket-cap-mb list: expected MiB, e.g. 1,5,25,100");
  if (caps.size() > kMaxCaps) usage_error("--bucket-cap-mb lists more than {} caps", kMaxCaps);
  return caps;
}

struct Checked {
  ReplayPlan plan;
  int rounds = 1;
  double min_gain = 0.02;
};

int round_count(const ReplayRequest& pq, const ReplayPlan& plan) {
  if (pq.rounds.empty()) {
    const bool launched = detect_launch().kind != LaunchInfo::Kind::Single;
    return plan.caps_mb.size() > 1 && !launched ? 5 : 1;
  }
  const std::int64_t n = parse_int(pq.rounds, "--rounds");
  if (n < 1 || n > 1000) usage_error("invalid --rounds '{}': expected 1 to 1000", pq.rounds);
  return static_cast<int>(n);
}

Checked check_replay(const RunRequest& rq, const ReplayRequest& pq) {
  Checked c;
  c.plan = replay_plan(rq, pq);
  c.rounds = round_count(pq, c.plan);
  const double gain = parse_double(pq.min_gain, "--min-gain");
  if (gain < 0) usage_error("invalid --min-gain '{}': expected a percentage >= 0", pq.min_gain);
  c.min_gain = gain / 100;
  format_named(rq.format, Writes::Replay);
  for (const auto& path : rq.outputs) {
    format_for_path(path, Writes::Replay);
    check_output_directory(path);
  }
  check_distinct_outputs(rq.outputs, {{"--model", pq.model}});
  return c;
}

// The report on stdout in --format (a records-only format's verdict lines on stderr, first) and
// in each --output file.
void write_report(const ReplayReport& report, const RunRequest& rq) {
  const OutputFormat& f = format_named(rq.format, Writes::Replay);
  if (f.replay != write_replay_table) {  // the table holds them first
    for (const auto& v : report.verdicts) std::cerr << "commbench: replay: " << v.line << "\n";
  }
  f.replay(report, std::cout);
  for (const auto& path : rq.outputs) {
    std::ostringstream text;
    format_for_path(path, Writes::Replay).replay(report, text);
    write_file_atomically(path, text.str());
  }
}

// A validation failure after the report is written: exit 3 naming the first setting.
void fail_if_wrong(const std::vector<ReplayRecord>& records) {
  std::uint64_t wrong = 0;
  std::string first;
  for (const auto& r : records) {
    if (!r.wrong || *r.wrong == 0) continue;
    wrong += *r.wrong;
    if (first.empty()) first = r.setting();
  }
  if (wrong > 0) {
    fail(ErrorKind::Validation,
         "validation failed: {} wrong element{} in the replayed step's "
         "collectives (first: {})",
         wrong, wrong == 1 ? "" : "s", first);
  }
}

int replay_here(const RunRequest& rq, const Checked& c) {
  RunHooks hooks = run_meta_hooks(rq);
  hooks.rank_work = [&](RankContext& ctx) {
    ReplayOutcome o = run_replay(c.plan, ctx);
    ReplayReport report{o.meta, o.records, {}};
    report.verdicts = judge_bucket_caps(report.records, {}, c.min_gain);
    if (ctx.control.rank() == 0) write_report(report, rq);
    fail_if_wrong(report.records);
  };
  return run_request(rq, hooks);
}

// replay's command line for one launch of a sweep (its outputs are the job's own).
std::vector<std::string> launch_arguments(const RunRequest& rq, const ReplayRequest& pq) {
  std::vector<std::string> a = {"replay"};
  for (auto& arg : run_flag_arguments(rq, replay_takes_run_flag)) a.push_back(std::move(arg));
  const std::pair<const char*, const std::string*> own[] = {
      {"--model", &pq.model},
      {"--preset", &pq.preset},
      {"--pattern", &pq.pattern},
      {"--bucket-cap-mb", &pq.bucket_cap_mb},
      {"--first-bucket-mb", &pq.first_bucket_mb},
      {"--backward-us-per-mparam", &pq.backward_rate},
      {"--backward-ms", &pq.backward_ms},
      {"--forward-ratio", &pq.forward_ratio},
      {"--param-dtype", &pq.param_dtype},
      {"--min-gain", &pq.min_gain}};
  for (const auto& [flag, value] : own) {
    if (!value->empty()) a.insert(a.end(), {flag, *value});
  }
  a.insert(a.end(), {"--rounds", "1"});
  return a;
}

int replay_launches(const RunRequest& rq, const ReplayRequest& pq, const Checked& c) {
  check_job_launch(rq, rq.launch.empty() ? "--rounds" : "--launch");
  JobSpec spec;
  spec.args = launch_arguments(rq, pq);
  spec.document = true;
  if (!rq.launch.empty()) spec.launch_prefix = split_command(rq.launch);
  Progress progress(rq.progress, true, {}, "launches");
  std::set<std::string> said;
  std::vector<std::vector<ReplayRecord>> per_launch;
  std::map<int, ControlFigures> control;
  std::vector<LaunchControl> launches;
  std::optional<RunMeta> meta;
  std::string failure;
  for (int r = 0; r < c.rounds; ++r) {
    const std::string place = fmt::format("launch {} of {}", r + 1, c.rounds);
    progress.update(static_cast<std::size_t>(r + 1), static_cast<std::size_t>(c.rounds), place);
    JobSpec launch = spec;
    // Each launch runs its settings in an order of its own.
    launch.env.emplace_back("COMMBENCH_CASE_ORDER_SEED",
                            std::to_string(std::random_device{}() | 1u));
    const JobOutcome job = run_job(launch);
    progress.clear();
    print_diagnostics(job, said);
    if (job.exit_code != 0 && (job.exit_code != 3 || job.document.empty())) {
      fail(kind_of_exit(job.exit_code), "{}: {}", place,
           job.message.empty() ? fmt::format("exit {}", job.exit_code) : job.message);
    }
    ReplayReport doc = parse_replay_document(job.document, place);
    for (auto& rec : doc.records) rec.repeat = r;
    per_launch.push_back(std::move(doc.records));
    for (auto lc : doc.meta.launches) {
      lc.repeat = r;
      control[r] = {lc.pingpong_ns(), lc.compute_us()};
      launches.push_back(lc);
    }
    if (!meta) meta = doc.meta;
    if (job.exit_code == 3 && failure.empty()) failure = fmt::format("{}: {}", place, job.message);
  }
  progress.finish();
  ReplayReport report;
  report.meta = meta.value_or(RunMeta{});
  report.meta.launches = launches;
  report.meta.command_line = invocation();
  report.meta.repetitions = c.rounds > 1 ? c.rounds : 0;
  for (const auto& first : per_launch.front()) {
    std::vector<ReplayRecord> same;
    for (const auto& launch : per_launch) {
      for (const auto& rec : launch) {
        if (rec.same_setting(first)) same.push_back(rec);
      }
    }
    report.records.push_back(c.rounds > 1 ? summarize_launches(same) : same.front());
  }
  report.verdicts = judge_bucket_caps(report.records, control, c.min_gain);
  write_report(report, rq);
  if (!failure.empty()) fail(ErrorKind::Validation, "{}", failure);
  return 0;
}

// --dry-run: the model and each setting's collectives with their parameters, as JSON or tables.
int print_plan(const RunRequest& rq, const ReplayPlan& plan) {
  const int nranks = std::max(1, wanted_ranks(rq, run_settings(rq)));
  std::vector<std::optional<double>> caps;
  const std::vector<StepProgram> programs = replay_programs(plan, nranks, &caps);
  const OutputFormat& f = format_named(rq.format, Writes::Replay);
  if (f.replay == write_replay_json) {
    nlohmann::ordered_json doc;
    doc["schema"] = kReplayPlanSchema;
    doc["model"] = {{"name", plan.model.name}, {"source", plan.model.source}};
    doc["model"]["params"] = nlohmann::ordered_json::array();
    for (const auto& p : plan.model.params) {
      doc["model"]["params"].push_back(
          {{"name", p.name}, {"dtype", info(p.dtype).name}, {"numel", p.numel}, {"unit", p.unit}});
    }
    doc["nranks"] = nranks;
    doc["settings"] = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < programs.size(); ++k) {
      nlohmann::ordered_json s;
      s["pattern"] = programs[k].pattern;
      s["bucket_cap_mb"] = caps[k] ? nlohmann::ordered_json(*caps[k]) : nullptr;
      s["first_bucket_mb"] = caps[k] ? nlohmann::ordered_json(plan.first_mb) : nullptr;
      s["collectives"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < programs[k].ops.size(); ++i) {
        const StepOp& op = programs[k].ops[i];
        s["collectives"].push_back({{"index", i},
                                    {"collective", name(op.collective)},
                                    {"dtype", info(op.dtype).name},
                                    {"phase", op.phase},
                                    {"label", op.label},
                                    {"count", op.count},
                                    {"bytes", op.bytes},
                                    {"params", op.params},
                                    {"param_indices", op.param_indices}});
      }
      doc["settings"].push_back(std::move(s));
    }
    std::cout << doc.dump(1) << "\n";
    return 0;
  }
  std::cout << fmt::format("# replay {} (dry run, {} ranks): {} parameters, {} in {} tensors\n",
                           plan.model.name, nranks, plan.model.numel(),
                           format_size(plan.model.bytes()), plan.model.params.size());
  for (std::size_t k = 0; k < programs.size(); ++k) {
    std::cout << fmt::format(
        "#\n# {}{}: {} collectives\n", programs[k].pattern,
        caps[k] ? fmt::format(" cap {:g} MiB (first {:g} MiB)", *caps[k], plan.first_mb) : "",
        programs[k].ops.size());
    TextTable t;
    using A = TextTable::Align;
    t.set_header({"#", "collective", "dtype", "phase", "label", "tensors", "params", "bytes",
                  "first parameter", "last parameter"},
                 {A::Right, A::Left, A::Left, A::Left, A::Left, A::Right, A::Right, A::Right,
                  A::Left, A::Left});
    for (std::size_t i = 0; i < programs[k].ops.size(); ++i) {
      const StepOp& op = programs[k].ops[i];
      t.add_row({std::to_string(i), std::string(name(op.collective)),
                 std::string(info(op.dtype).name), op.phase, op.label,
                 std::to_string(op.param_indices.size()), std::to_string(op.params),
                 format_size(op.bytes), plan.model.params[op.param_indices.front()].name,
                 plan.model.params[op.param_indices.back()].name});
    }
    t.print(std::cout, "# ");
  }
  return 0;
}

}  // namespace

bool replay_takes_run_flag(const RunFlag& f) {
  static const std::set<std::string> taken = {
      "--backends", "--warmup", "--iters",    "--check", "--memory", "--nranks",     "--timeout",
      "--format",   "--output", "--progress", "--gpus",  "--launch", "--gloo-iface", "--nccl-lib"};
  return taken.count(f.long_name()) > 0;
}

ReplayPlan replay_plan(const RunRequest& rq, const ReplayRequest& pq) {
  const RunSettings s = run_settings(rq);
  ReplayPlan plan;
  plan.model = replay_model(pq);
  if (pq.pattern != "ddp" && pq.pattern != "fsdp") {
    usage_error("invalid --pattern '{}': expected ddp or fsdp", pq.pattern);
  }
  plan.pattern = pq.pattern;
  if (plan.pattern == "fsdp") {
    if (!pq.bucket_cap_mb.empty() || !pq.first_bucket_mb.empty()) {
      usage_error("--bucket-cap-mb and --first-bucket-mb are DDP's: --pattern fsdp has none");
    }
    if (!pq.forward_ratio.empty()) {
      plan.forward_ratio = parse_double(pq.forward_ratio, "--forward-ratio");
    }
  } else {
    if (!pq.forward_ratio.empty()) {
      usage_error(
          "--forward-ratio applies to --pattern fsdp (DDP's forward has no gradient "
          "communication)");
    }
    plan.caps_mb = parse_caps(pq.bucket_cap_mb);
    plan.first_mb = pq.first_bucket_mb.empty()
                        ? static_cast<double>(kDdpFirstBucketBytes) / (1024 * 1024)
                        : parse_mb(pq.first_bucket_mb, "--first-bucket-mb");
  }
  plan.compute = compute_model(pq.backward_rate, pq.backward_ms, plan.model);
  plan.warmup = s.runner.warmup ? static_cast<int>(*s.runner.warmup) : 3;
  plan.steps = s.runner.iters ? static_cast<int>(*s.runner.iters) : 10;
  if (plan.warmup > 10000 || plan.steps > 10000) {
    usage_error("replay runs at most 10000 warm-up and 10000 timed steps");
  }
  plan.check = s.runner.check;
  // The programs once here for any rank count, so that a bad model fails before anything runs.
  replay_programs(plan, std::max(1, wanted_ranks(rq, s)));
  return plan;
}

int replay(const RunRequest& rq, const ReplayRequest& pq) {
  const Checked c = check_replay(rq, pq);
  if (pq.dry_run) return print_plan(rq, c.plan);
  if (c.rounds > 1 || !rq.launch.empty()) return replay_launches(rq, pq, c);
  return replay_here(rq, c);
}

}  // namespace cb
