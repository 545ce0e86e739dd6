// `run --repeat N` and `run --launch 'PREFIX'`: the sweep as N fresh jobs (collectives/launch/
// job), each repetition's records streamed to .jsonl outputs as it ends, and one summary per
// measurement (medians over repetitions, every repetition kept) in the other outputs.
#include <fmt/format.h>

#include <iostream>
#include <random>
#include <set>

#include "cmd/options.hpp"
#include "cmd/progress.hpp"
#include "cmd/run.hpp"
#include "collectives/launch/process_start.hpp"
#include "collectives/launch/job.hpp"
#include "collectives/launch/mpi_relaunch.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "report/repetitions.hpp"
#include "report/result_reader.hpp"
#include "report/writer.hpp"

namespace cb {

namespace {

ErrorKind kind_of_exit(int code) {
  switch (code) {
    case 2:
      return ErrorKind::Usage;
    case 3:
      return ErrorKind::Validation;
    case 4:
      return ErrorKind::Timeout;
    case 5:
      return ErrorKind::Regression;
    default:
      return ErrorKind::Runtime;
  }
}

}  // namespace

void print_diagnostics(const JobOutcome& job, std::set<std::string>& said) {
  for (const auto& line : job.diagnostics) {
    // A failed job's other error lines are mostly ranks reacting to the failure its verdict
    // names; its notes and warnings still count.
    bool remark =
        line.rfind("commbench: note:", 0) == 0 || line.rfind("commbench: warning:", 0) == 0;
    if ((job.exit_code == 0 || remark) && said.insert(line).second) std::cerr << line << "\n";
  }
}

std::vector<std::string> run_arguments(const RunRequest& rq) {
  std::vector<std::string> a = {"run"};
  auto opt = [&](const char* flag, const std::string& value) {
    if (!value.empty()) a.insert(a.end(), {flag, value});
  };
  opt("--collectives", rq.collectives);
  opt("--backends", rq.backends);
  opt("--algorithms", rq.algorithms);
  opt("--min-bytes", rq.min_bytes);
  opt("--max-bytes", rq.max_bytes);
  opt("--step-factor", rq.step_factor);
  opt("--step-bytes", rq.step_bytes);
  opt("--dtypes", rq.dtypes);
  opt("--ops", rq.ops);
  opt("--placement", rq.placement);
  opt("--root", rq.root);
  opt("--warmup", rq.warmup);
  opt("--iters", rq.iters);
  opt("--min-time", rq.min_time);
  a.push_back(rq.check ? "--check" : "--no-check");
  opt("--memory", rq.memory);
  opt("--nranks", rq.nranks);
  opt("--timeout", rq.timeout);
  for (const auto& [name, value] : rq.backend_flags) opt(name.c_str(), value);
  opt("--gpus", rq.gpus);
  return a;
}

void check_job_launch(const RunRequest& rq, const char* what) {
  if (detect_launch().kind != LaunchInfo::Kind::Single) {
    usage_error(
        "{} starts a fresh job per launch and cannot run under mpirun/srun/torchrun: run "
        "commbench directly, and give your launcher with --launch 'PREFIX'",
        what);
  }
  if (!rq.launch.empty()) launcher_kind(split_command(rq.launch).front(), build_mpi_flavor());
}

JobSpec job_spec(const RunRequest& rq) {
  JobSpec spec;
  spec.args = run_arguments(rq);
  if (!rq.launch.empty()) spec.launch_prefix = split_command(rq.launch);
  return spec;
}

JobWriters job_writers(const RunRequest& rq) {
  JobWriters w;
  w.summaries.push_back(make_stream_writer(rq.format, std::cout));
  for (const auto& path : rq.outputs) {
    (path.ends_with(".jsonl") ? w.streams : w.summaries).push_back(make_file_writer(path));
  }
  return w;
}

int execute_repeated(const RunRequest& rq) {
  check_run_request(rq);
  const int n = repeat_count(rq);
  check_job_launch(rq, n > 1 ? "--repeat" : "--launch");

  const JobSpec spec = job_spec(rq);
  // .jsonl outputs stream every repetition's records; the others get the summaries at the end.
  auto [streams, summaries] = job_writers(rq);
  if (rq.extra_writer) summaries.push_back(rq.extra_writer());

  Progress progress(rq.progress, true, {}, "repetitions");
  std::set<std::string> said;
  std::vector<ResultRecord> all;
  std::vector<LaunchControl> launches;
  RunMeta meta;
  bool have_meta = false;
  std::string failure;
  int failure_code = 0;
  for (int r = 0; r < n; ++r) {
    progress.update(static_cast<std::size_t>(r + 1), static_cast<std::size_t>(n),
                    fmt::format("repetition {} of {}", r + 1, n));
    // Each launch runs its cases in its own shuffled order, so that a slow stretch of the
    // machine does not always hit the same sizes; the seed is recorded with its control.
    JobSpec launch = spec;
    const std::uint64_t seed = std::random_device{}() | 1u;
    launch.env.emplace_back("COMMBENCH_CASE_ORDER_SEED", std::to_string(seed));
    JobOutcome job = run_job(launch);
    progress.clear();
    print_diagnostics(job, said);
    const std::string place = fmt::format("repetition {} of {}", r + 1, n);
    if (job.exit_code != 0 && job.exit_code != 3) {
      fail(kind_of_exit(job.exit_code), "{}: {}", place, job.message);
    }
    ResultFile f = parse_result_text(job.document, place + ".json");
    if (!have_meta && f.meta) {
      meta = *f.meta;
      have_meta = true;
      for (auto& w : streams) w->begin(meta);
    }
    if (f.meta) {
      for (auto c : f.meta->launches) {
        if (n > 1) c.repeat = r;
        launches.push_back(c);
      }
    }
    for (auto& rec : f.records) {
      if (n > 1) rec.repeat = r;
      for (auto& w : streams) w->add(rec);
      all.push_back(rec);
    }
    if (job.exit_code == 3 && failure.empty()) {
      failure = fmt::format("{}: {}", place, job.message);
      failure_code = 3;
    }
  }
  progress.finish();
  for (auto& w : streams) w->finish();
  meta.command_line = invocation();
  meta.repetitions = n > 1 ? n : 0;
  meta.launches = launches;
  for (auto& w : summaries) w->begin(meta);
  for (const auto& s : n > 1 ? summarize_all(all) : all) {
    for (auto& w : summaries) w->add(s);
  }
  for (auto& w : summaries) w->finish();
  if (failure_code != 0) fail(kind_of_exit(failure_code), "{}", failure);
  return 0;
}

}  // namespace cb
