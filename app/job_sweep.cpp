#include "app/job_sweep.hpp"

#include <fmt/format.h>

#include <string.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "common/error.hpp"
#include "common/invocation.hpp"
#include "report/format/result_reader.hpp"
#include "report/repetitions.hpp"

namespace cb {

namespace {

JobSpec job_spec(const RunPlan& plan) {
  JobSpec spec;
  spec.args = plan.job_arguments;
  spec.launch_prefix = plan.launch;
  spec.timeout = plan.timeout;
  return spec;
}

// Test-only: with COMMBENCH_TEST_PAUSE_BETWEEN_JOBS=FILE, the sweep creates FILE after each job
// and waits there for a stop signal or for FILE to be removed (at most 60 s), so that tests can
// stop it between jobs or change its surroundings (fill TMPDIR) before the next one.
void pause_between_jobs_for_tests(const StopSignals& stop) {
  const char* file = std::getenv("COMMBENCH_TEST_PAUSE_BETWEEN_JOBS");
  if (file == nullptr || *file == '\0') return;
  std::ofstream(file) << ::getpid() << "\n";
  for (int i = 0; i < 6000 && !stop.caught() && ::access(file, F_OK) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The cases a failed job finished: the whole records of its .jsonl (a record cut by the
// failure is dropped), so that the sweep keeps them as a plain run does.
std::vector<ResultRecord> finished_records(const std::string& jsonl, const std::string& label) {
  const std::size_t end = jsonl.rfind('\n');
  if (end == std::string::npos) return {};
  try {
    return parse_result_text(std::string_view(jsonl).substr(0, end + 1), label + ".jsonl").records;
  } catch (const Error&) {
    return {};  // unreadable: the failure's own line says what went wrong
  }
}

// A job that could not even start (its temporary directory cannot be written, fork failed)
// fails like one that started: the sweep marks what it kept and names the cause.
JobOutcome run_job_or_failure(const JobSpec& spec) {
  try {
    return run_job(spec);
  } catch (const Error& e) {
    JobOutcome out;
    out.exit_code = exit_code(e.kind());
    out.message = e.what();
    return out;
  }
}

}  // namespace

// A job's notes and warnings, and when it succeeded its other stderr lines, each printed once
// over a sweep of jobs.
void print_diagnostics(const JobOutcome& job, std::set<std::string>& said) {
  for (const auto& line : job.diagnostics) {
    // A failed job's other error lines are mostly ranks reacting to the failure its verdict
    // names; its notes and warnings still count.
    bool remark =
        line.rfind("commbench: note:", 0) == 0 || line.rfind("commbench: warning:", 0) == 0;
    if ((job.exit_code == 0 || remark) && said.insert(line).second) std::cerr << line << "\n";
  }
}

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

JobSweep::JobSweep(const RunPlan& plan, std::string unit, int repeats)
    : spec_(job_spec(plan)),
      repeats_(repeats),
      progress_(plan.progress, true, {}, std::move(unit)) {
  // stdout (in --format) and the outputs that are not streamed get the summaries at the end.
  if (plan.results_to_stdout) summaries_.push_back(make_stream_writer(plan.format, std::cout));
  for (const auto& path : plan.outputs) {
    (is_streamed_output(path) ? streams_ : summaries_).push_back(make_file_writer(path));
  }
  for (auto& w : streams_) w->begin(RunMeta{});
}

GroupOutcome JobSweep::run(
    const JobGroup& group, std::size_t index, std::size_t total,
    const std::function<std::string(const std::optional<RunMeta>&)>& check_meta) {
  GroupOutcome out;
  JobSpec spec = spec_;
  spec.env = group.env;
  progress_.update(index, total, group.label);
  for (int j = 0; j < group.jobs; ++j) {
    if (started_) pause_between_jobs_for_tests(stop_);
    started_ = true;
    if ((out.interrupted = stop_.caught())) {
      out.exit_code = 1;
      out.message = fmt::format("interrupted by signal {} ({}) between two jobs", out.interrupted,
                                ::strsignal(out.interrupted));
      return out;
    }
    JobSpec launch = spec;
    if (group.shuffled) {
      const std::uint64_t seed = std::random_device{}() | 1u;
      launch.env.emplace_back("COMMBENCH_CASE_ORDER_SEED", std::to_string(seed));
    }
    JobOutcome job = run_job_or_failure(launch);
    progress_.clear();
    print_diagnostics(job, said_);
    out.exit_code = job.exit_code;
    out.message = job.message;
    if (job.exit_code != 0 && out.message.empty()) {
      out.message =
          fmt::format("the job ended with exit {} and said nothing on stderr", job.exit_code);
    }
    out.interrupted = job.interrupted;
    if (job.exit_code != 0 && (job.exit_code != 3 || job.document.empty())) {
      for (auto& rec : finished_records(job.records, group.label)) {
        rec.env = group.env_tag;
        if (repeats_ > 1) rec.repeat = group.first_repeat + j;
        out.records.push_back(std::move(rec));
      }
      return out;
    }
    ResultFile f = parse_result_text(job.document, fmt::format("{}.json", group.label));
    if (check_meta) out.rejected = check_meta(f.meta);
    if (!out.rejected.empty()) return out;
    if (!out.meta) out.meta = f.meta;
    ++jobs_run_;
    for (auto c : f.meta ? f.meta->launches : std::vector<LaunchControl>{}) {
      if (repeats_ > 1) c.repeat = group.first_repeat + j;
      out.launches.push_back(c);
    }
    for (auto& rec : f.records) {
      rec.env = group.env_tag;
      if (repeats_ > 1) rec.repeat = group.first_repeat + j;
      out.records.push_back(std::move(rec));
    }
    if (job.exit_code != 0) return out;
  }
  return out;
}

void JobSweep::keep(const std::vector<ResultRecord>& records, const std::optional<RunMeta>& meta) {
  if (!meta_) meta_ = meta;
  for (const auto& r : records) {
    for (auto& w : streams_) w->add(r);
    kept_.push_back(r);
  }
}

void JobSweep::abandon(int exit_code, const std::string& reason) {
  for (auto& w : streams_) w->abandon(exit_code, reason);
  abandoned_ = true;  // the marked streams are closed: finish() must not write them again
}

std::vector<ResultRecord> JobSweep::finish(bool completed,
                                           const std::function<void(RunMeta&)>& adjust) {
  if (completed) progress_.finish();
  if (!abandoned_) {
    for (auto& w : streams_) w->finish();
  }
  RunMeta meta = meta_.value_or(RunMeta{});
  meta.command_line = invocation();
  meta.repetitions = repeats_ > 1 ? repeats_ : 0;
  // The first job's straggler judgement is not the sweep's: each job warned on its own.
  if (jobs_run_ > 1) meta.straggler.reset();
  if (adjust) adjust(meta);
  std::vector<ResultRecord> results = repeats_ > 1 ? summarize_all(kept_) : kept_;
  for (auto& w : summaries_) w->begin(meta);
  for (const auto& r : results) {
    for (auto& w : summaries_) w->add(r);
  }
  for (auto& w : summaries_) w->finish();
  return results;
}

}  // namespace cb
