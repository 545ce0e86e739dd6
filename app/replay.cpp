#include "app/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "app/job_sweep.hpp"
#include "app/rank_run.hpp"
#include "app/run_fingerprint.hpp"
#include "collectives/backends/registry.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "collectives/catalogue/names.hpp"
#include "collectives/patterns/ddp_buckets.hpp"
#include "collectives/patterns/presets.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/invocation.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "core/process_start.hpp"
#include "launch/job.hpp"
#include "launch/progress.hpp"
#include "report/replay/replay_output.hpp"
#include "report/replay/replay_verdict.hpp"

namespace cb {

namespace {

// Whether replay takes run's row `f`: the launch, the backends and each backend's own flags, the
// steps, validation and outputs.
bool replay_takes_run_flag(const Flag<RunRequest, RunPlan>& f) {
  static const std::set<std::string> taken = [] {
    std::set<std::string> names = {"--backends", "--warmup",   "--iters",   "--check",
                                   "--memory",   "--nranks",   "--timeout", "--format",
                                   "--output",   "--progress", "--gpus",    "--launch"};
    for (const auto& e : backend_registry()) {
      for (const auto& b : e.flags) {
        if (b.in_replay) names.insert(b.name);
      }
    }
    return names;
  }();
  return taken.count(f.long_name()) > 0;
}

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

// replay's plan: run's rows it takes, planned as `run` plans them, and its own.
struct Checked {
  RunPlan run;
  ReplayPlan plan;
  int rounds = 1;
  double min_gain = 0.02;
};

int round_count(const ReplayRequest& rq, const ReplayPlan& plan) {
  if (rq.rounds.empty()) {
    const bool launched = detect_launch().kind != LaunchInfo::Kind::Single;
    return plan.caps_mb.size() > 1 && !launched ? 5 : 1;
  }
  const std::int64_t n = parse_int(rq.rounds, "--rounds");
  if (n < 1 || n > 1000) usage_error("invalid --rounds '{}': expected 1 to 1000", rq.rounds);
  return static_cast<int>(n);
}

// The model, the pattern and its settings (DDP's caps, FSDP's forward ratio), the compute.
ReplayPlan own_plan(const ReplayRequest& rq) {
  ReplayPlan plan;
  plan.model = replay_model(rq);
  if (rq.pattern != "ddp" && rq.pattern != "fsdp") {
    usage_error("invalid --pattern '{}': expected ddp or fsdp", rq.pattern);
  }
  plan.pattern = rq.pattern;
  if (plan.pattern == "fsdp") {
    if (!rq.bucket_cap_mb.empty() || !rq.first_bucket_mb.empty()) {
      usage_error("--bucket-cap-mb and --first-bucket-mb are DDP's: --pattern fsdp has none");
    }
    if (!rq.forward_ratio.empty()) {
      plan.forward_ratio = parse_double(rq.forward_ratio, "--forward-ratio");
    }
  } else {
    if (!rq.forward_ratio.empty()) {
      usage_error(
          "--forward-ratio applies to --pattern fsdp (DDP's forward has no gradient "
          "communication)");
    }
    plan.caps_mb = parse_caps(rq.bucket_cap_mb);
    plan.first_mb = rq.first_bucket_mb.empty()
                        ? static_cast<double>(kDdpFirstBucketBytes) / (1024 * 1024)
                        : parse_mb(rq.first_bucket_mb, "--first-bucket-mb");
  }
  plan.compute = compute_model(rq.backward_rate, rq.backward_ms, plan.model);
  return plan;
}

// Every value checked and typed before anything runs; a usage Error names the first bad one.
Checked plan_replay(const ReplayRequest& rq) {
  Checked c;
  // The report's formats before run's plan, which knows only the records' ones.
  kReplayFormats.named(rq.run.format);
  for (const auto& path : rq.run.outputs) {
    kReplayFormats.for_path(path);
    check_output_directory(path);
  }
  c.plan = own_plan(rq);
  c.rounds = round_count(rq, c.plan);
  c.run = plan_run(rq.run, c.rounds > 1 && rq.run.launch.empty() ? "--rounds" : nullptr);
  c.plan.warmup = c.run.runner.warmup ? static_cast<int>(*c.run.runner.warmup) : 3;
  c.plan.steps = c.run.runner.iters ? static_cast<int>(*c.run.runner.iters) : 10;
  if (c.plan.warmup > 10000 || c.plan.steps > 10000) {
    usage_error("replay runs at most 10000 warm-up and 10000 timed steps");
  }
  c.plan.check = c.run.runner.check;
  // The programs once here for any rank count, so that a bad model fails before anything runs.
  replay_programs(c.plan, wanted_ranks(c.run));
  const double gain = parse_double(rq.min_gain, "--min-gain");
  if (gain < 0) usage_error("invalid --min-gain '{}': expected a percentage >= 0", rq.min_gain);
  c.min_gain = gain / 100;
  check_distinct_outputs(rq.run.outputs, {{"--model", rq.model}});
  return c;
}

// The report on stdout in --format (a records-only format's verdict lines on stderr, first) and
// in each --output file.
void write_report(const ReplayReport& report, const RunPlan& run) {
  const ReplayWriter& f = kReplayFormats.named(run.format);
  if (f.write != write_replay_table) {  // the table holds them first
    for (const auto& v : report.verdicts) std::cerr << "commbench: replay: " << v.line << "\n";
  }
  f.write(report, std::cout);
  for (const auto& path : run.outputs) {
    std::ostringstream text;
    kReplayFormats.for_path(path).write(report, text);
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

// replay's own plan as every env:// rank must run it (run_fingerprint adds run's options): the
// model by its contents (each rank reads its own file), the pattern and its settings, the
// compute. --min-gain is rank 0's verdict; --rounds above 1 is refused under a launcher.
PlanFingerprint replay_fingerprint(const ReplayPlan& plan) {
  PlanFingerprint params;
  for (const auto& p : plan.model.params) {
    params.add(p.name,
               fmt::format("{} {} {} {}", info(p.dtype).name, p.numel,
                           p.backward_us ? fmt::format("{}", *p.backward_us) : "-", p.unit));
  }
  PlanFingerprint f = command_fingerprint("replay");
  f.add("--model/--preset",
        fmt::format("{}: {} parameters, {}, digest {}",
                    plan.model.source.empty() ? "a model file" : plan.model.name,
                    plan.model.params.size(), format_size(plan.model.bytes()), params.digest()));
  f.add("--pattern", plan.pattern);
  std::string caps;
  for (double mb : plan.caps_mb) caps += fmt::format("{}{}", caps.empty() ? "" : ",", mb);
  f.add("--bucket-cap-mb", caps);
  f.add("--first-bucket-mb", fmt::format("{}", plan.first_mb));
  std::string compute = "none";
  if (plan.compute.kind == ComputeModel::Kind::Input) compute = "the input's backward_us";
  if (plan.compute.kind == ComputeModel::Kind::Rate)
    compute = fmt::format("{} us per million parameters", plan.compute.value);
  if (plan.compute.kind == ComputeModel::Kind::Total)
    compute = fmt::format("{} us in all", plan.compute.value);
  f.add("--backward-us-per-mparam/--backward-ms", compute);
  f.add("--forward-ratio", fmt::format("{}", plan.forward_ratio));
  return f;
}

int replay_here(const Checked& c) {
  return run_here(
      c.run, {},
      [&](RankContext& ctx) {
        ReplayOutcome o = run_replay(c.plan, ctx);
        ReplayReport report{o.meta, o.records, {}};
        report.verdicts = judge_bucket_caps(report.records, {}, c.min_gain);
        if (ctx.control.rank() == 0) write_report(report, c.run);
        fail_if_wrong(report.records);
      },
      replay_fingerprint(c.plan));
}

// replay's command line for one launch of a sweep: every relaunched row of both tables with
// its value (its outputs are the sweep's own), one round.
std::vector<std::string> launch_arguments(const ReplayRequest& rq) {
  std::vector<std::string> a = {"replay"};
  for (auto& arg : run_flag_arguments(rq.run, replay_takes_run_flag)) a.push_back(std::move(arg));
  ReplayRequest values = rq;  // the rows' accessors take a request
  for (const auto& f : replay_flags()) {
    if (!f.relaunched) continue;
    if (const std::string& v = f.text(values); !v.empty()) a.insert(a.end(), {f.long_name(), v});
  }
  a.insert(a.end(), {"--rounds", "1"});
  return a;
}

int replay_launches(const ReplayRequest& rq, const Checked& c) {
  JobSpec spec;
  spec.args = launch_arguments(rq);
  spec.document = true;
  spec.launch_prefix = c.run.launch;
  spec.timeout = c.run.timeout;
  Progress progress(c.run.progress, true, {}, "launches");
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
  write_report(report, c.run);
  if (!failure.empty()) fail(ErrorKind::Validation, "{}", failure);
  return 0;
}

// --dry-run: the model and each setting's collectives with their parameters, as JSON or tables.
int print_plan(const RunPlan& run, const ReplayPlan& plan) {
  const int nranks = wanted_ranks(run);
  std::vector<std::optional<double>> caps;
  const std::vector<StepProgram> programs = replay_programs(plan, nranks, &caps);
  if (kReplayFormats.named(run.format).write == write_replay_json) {
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

const Flags<ReplayRequest>& replay_flags() {
  using Q = ReplayRequest;
  static const Flags<Q> flags = [] {
    Flag<Q> rounds = value_flag("--rounds", &Q::rounds,
                                "launches, each measuring every setting (default 5 with several "
                                "bucket caps, else 1)");
    rounds.relaunched = false;  // each launch of the sweep is one round
    Flag<Q> dry_run = toggle_flag(
        "--dry-run", &Q::dry_run,
        "print each setting's collectives (DDP's buckets, FSDP's units) with their parameters, "
        "and run nothing");
    dry_run.relaunched = false;
    return Flags<Q>{
        value_flag("--model", &Q::model,
                   "CSV of the model's parameters: name,dtype,numel[,backward_us][,unit] in "
                   "model.parameters() order"),
        value_flag("--preset", &Q::preset, "a built-in model: " + preset_names()),
        value_flag("--pattern", &Q::pattern, "ddp (gradient buckets) or fsdp (full shard)"),
        value_flag("--bucket-cap-mb", &Q::bucket_cap_mb,
                   "DDP's bucket_cap_mb in MiB, or a list to sweep (default 25)"),
        value_flag("--first-bucket-mb", &Q::first_bucket_mb,
                   "DDP's first bucket in MiB (default 1)"),
        value_flag("--backward-us-per-mparam", &Q::backward_rate,
                   "backward compute: microseconds per million parameters"),
        value_flag("--backward-ms", &Q::backward_ms,
                   "backward compute: milliseconds per step in all, spread over the parameters"),
        value_flag("--forward-ratio", &Q::forward_ratio,
                   "fsdp: forward compute per unit, as a fraction of its backward (default 0.5)"),
        value_flag("--param-dtype", &Q::param_dtype,
                   "cast every parameter to this dtype (float, bfloat16, half, ...)"),
        rounds,
        value_flag("--min-gain", &Q::min_gain,
                   "percent a bucket cap's step must beat the reference cap's by (default 2)"),
        dry_run};
  }();
  return flags;
}

const Flags<RunRequest, RunPlan>& replay_run_flags() {
  static const Flags<RunRequest, RunPlan> flags = [] {
    const std::map<std::string, std::string> help = {
        {"--warmup", "untimed steps before the timed ones (default 3)"},
        {"--iters", "timed steps per setting (default 10)"},
        {"--check", "validate every collective of the step exactly (default on)"},
        {"--format", "stdout format: " + listed(kReplayFormats.names()) + " (default table)"},
        {"--output",
         "also write FILE (" + listed(kReplayFormats.extensions(), " ") + "); repeatable"}};
    Flags<RunRequest, RunPlan> rows;
    for (auto f : run_flags()) {
      if (!replay_takes_run_flag(f)) continue;
      if (auto it = help.find(f.long_name()); it != help.end()) f.help = it->second;
      rows.push_back(std::move(f));
    }
    return rows;
  }();
  return flags;
}

int replay(const ReplayRequest& rq) {
  const Checked c = plan_replay(rq);
  if (rq.dry_run) return print_plan(c.run, c.plan);
  if (c.rounds > 1 || !c.run.launch.empty()) return replay_launches(rq, c);
  return replay_here(c);
}

}  // namespace cb
