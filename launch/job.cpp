#include "launch/job.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "launch/job_guard.hpp"
#include "launch/launcher_message.hpp"
#include "launch/mpi_relaunch.hpp"
#include "launch/rank_exits.hpp"
#include "launch/rank_status.hpp"
#include "launch/rank_watch.hpp"
#include "launch/stop_signals.hpp"
#include "launch/temp_dir.hpp"

namespace cb {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The job's stderr: its last error line (the verdict commbench's own main prints when the job
// ends; ranks' earlier lines are often reactions to it) becomes the message, the rest
// diagnostics. Without one, what the launcher or the MPI library said (first_meaningful_message)
// is the message. Returns whether a rank printed a verdict line.
bool read_diagnostics(const std::string& text, JobOutcome& out) {
  std::istringstream in(text);
  std::string line;
  const std::string tag = "commbench: ";
  std::vector<std::string> lines, others;
  int verdict = -1;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      others.push_back("");  // a blank line ends a help box's paragraph
      continue;
    }
    bool ours = starts_with(line, tag.c_str());
    bool remark =
        ours && (starts_with(line, "commbench: note:") || starts_with(line, "commbench: warning:"));
    if (ours && !remark) verdict = static_cast<int>(lines.size());
    if (!ours) others.push_back(line);
    lines.push_back(line);
  }
  for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
    if (out.exit_code != 0 && i == verdict) {
      out.message = lines[i].substr(tag.size());
    } else {
      out.diagnostics.push_back(lines[i]);
    }
  }
  out.launcher_said = first_meaningful_message(others);
  if (out.exit_code != 0 && out.message.empty()) out.message = out.launcher_said;
  return verdict >= 0;
}

[[noreturn]] void exec_child(const std::vector<std::string>& command, const EnvList& env,
                             const std::string& dir, const std::string& stderr_path, pid_t parent) {
  int in_fd = ::open("/dev/null", O_RDONLY);
  int null_fd = ::open("/dev/null", O_WRONLY);
  int err_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (in_fd < 0 || null_fd < 0 || err_fd < 0 || ::dup2(in_fd, STDIN_FILENO) < 0 ||
      ::dup2(null_fd, STDOUT_FILENO) < 0 || ::dup2(err_fd, STDERR_FILENO) < 0) {
    ::_exit(127);
  }
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The job runs in a process group of its own under a guard that stops all of it when commbench
  // dies (and then removes the job's directory); the launcher gets SIGTERM first, the chance to
  // stop its ranks.
  guard_job(parent, dir, [&] {
    ::execvp(argv[0], argv.data());
    std::string msg = "commbench: cannot start " + command[0] + ": " + std::strerror(errno) + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    ::_exit(127);
  });
}

// Waits for the job; a signal to commbench is passed on as SIGTERM, then SIGKILL after 10 s. With
// a start-up bound (> 0), a job that has not `started()` by then is stopped the same way and
// `never_started` set.
int wait_for(pid_t pid, const StopSignals& signals, int& interrupted, double startup_bound_s,
             const std::function<bool()>& started, bool& never_started) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  Clock::time_point kill_at{};
  bool forwarded = false, killed = false;
  bool confirmed = startup_bound_s <= 0;
  int status = 0;
  while (true) {
    if (signals.caught() && !forwarded) {
      interrupted = signals.caught();
      stop_process_group(pid, SIGTERM);
      forwarded = true;
      kill_at = Clock::now() + std::chrono::seconds(10);
    }
    if (!confirmed && !forwarded) {
      confirmed = started();
      if (!confirmed && Clock::now() - begin >= std::chrono::duration<double>(startup_bound_s)) {
        never_started = true;
        stop_process_group(pid, SIGTERM);
        forwarded = true;
        kill_at = Clock::now() + std::chrono::seconds(10);
      }
    }
    const bool polling = forwarded || !confirmed;
    pid_t got = ::waitpid(pid, &status, polling ? WNOHANG : 0);
    if (got == pid) return status;
    if (got < 0 && errno != EINTR) return status;
    if (forwarded && !killed && Clock::now() >= kill_at) {
      stop_process_group(pid, SIGKILL);
      killed = true;
    }
    if (polling) std::this_thread::sleep_for(std::chrono::milliseconds(forwarded ? 20 : 100));
  }
}

bool is_openmpi_name(const std::string& name) {
  for (const char* s : {"openmpi", "orterun", "prterun", "ompi"}) {
    if (name.find(s) != std::string::npos) return true;
  }
  return false;
}

bool is_mpich_name(const std::string& name) {
  return name.find("mpich") != std::string::npos || name.find("hydra") != std::string::npos;
}

// `program` resolved through PATH and symbolic links, "" when not found.
std::string resolve(const std::string& program) {
  std::error_code ec;
  auto canonical = [&](const std::filesystem::path& p) {
    auto c = std::filesystem::canonical(p, ec);
    return ec ? std::string() : c.string();
  };
  if (program.find('/') != std::string::npos) return canonical(program);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::filesystem::path candidate = std::filesystem::path(dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return canonical(candidate);
  }
  return {};
}

// Under a launcher prefix the ranks are the job's own processes: those that can reach this
// process's files (the same host, or emulated hosts) report how they ended, as under commbench's
// own mpirun. When one of them failed first (killed, ended without a word, or said why), that
// is the job's verdict, naming its host when the ranks span several; a peer stopped by the
// launcher is a consequence, never the verdict.
// Returns whether the verdict is a rank's own (its code 2-5 or its words).
bool judge_watched_ranks(const std::string& status_dir, RankWatch& watch, JobOutcome& out,
                         const std::string& launcher) {
  watch.wait_for_all_ended(std::chrono::seconds(2));
  std::vector<RankExit> exits = read_watched_ranks(status_dir, watch.hosts(), watch.ended());
  bool failed = false;
  for (const auto& e : exits) {
    const bool ok = !e.unreported && !e.signaled && e.code == 0;
    failed = failed || (!ok && !e.stopped_by_launcher);
  }
  if (!failed) return false;
  RunVerdict v = with_launcher_words(judge(exits), launcher, out.launcher_said);
  v = name_stopped_rank(v, exits, watch.stopped(), watch.hosts());
  if (v.exit_code == 0 || v.message.empty()) return v.rank_said && v.exit_code != 0;
  out.exit_code = v.exit_code;
  out.message = v.message;
  return v.rank_said;
}

bool has_content(const std::string& path) {
  std::error_code ec;
  return std::filesystem::file_size(path, ec) > 0 && !ec;
}

std::string base_name(const std::string& program) {
  return std::filesystem::path(program).filename().string();
}

}  // namespace

double launch_startup_bound(double timeout_s) {
  return timeout_s + std::max(10.0, timeout_s);
}

std::string own_executable() {
  char exe[4096];
  ssize_t len = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) runtime_error("cannot find this program's executable: {}", std::strerror(errno));
  return std::string(exe, static_cast<std::size_t>(len));
}

std::vector<std::string> split_command(const std::string& text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (++i == text.size()) usage_error("--launch '{}' ends with a lone backslash", text);
      cur += text[i];
    } else if (c == '\'') {
      auto end = text.find('\'', i + 1);
      if (end == std::string::npos) usage_error("--launch '{}' has an unterminated ' quote", text);
      cur += text.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\'))
          ++i;
        cur += text[i++];
      }
      if (i >= text.size()) usage_error("--launch '{}' has an unterminated \" quote", text);
    } else {
      cur += c;
    }
  }
  if (in_word) words.push_back(cur);
  if (words.empty()) usage_error("--launch is empty: expected a launcher such as 'mpirun -np 4'");
  return words;
}

void check_launcher_exists(const std::string& program) {
  if (!resolve(program).empty()) return;
  usage_error("--launch '{}': no such program{}", program,
              program.find('/') == std::string::npos ? " on PATH" : "");
}

LauncherKind launcher_kind(const std::string& program, const std::string& build_flavor) {
  std::string base = std::filesystem::path(program).filename().string();
  if (base == "srun") return LauncherKind::Slurm;
  for (const std::string& name : {base, resolve(program)}) {
    if (is_openmpi_name(name)) return LauncherKind::OpenMpi;
    if (is_mpich_name(name)) return LauncherKind::Mpich;
  }
  if (starts_with(base, "mpirun") || starts_with(base, "mpiexec")) {
    return build_flavor == "MPICH" ? LauncherKind::Mpich : LauncherKind::OpenMpi;
  }
  usage_error(
      "--launch '{}': cannot tell how to pass environment variables to every rank: expected "
      "mpirun or mpiexec (Open MPI or MPICH) or srun",
      program);
}

std::vector<std::string> launcher_command(const std::vector<std::string>& prefix, LauncherKind kind,
                                          const EnvList& env,
                                          const std::vector<std::string>& program) {
  std::vector<std::string> cmd = prefix;
  if (kind == LauncherKind::OpenMpi) {
    for (const auto& [name, value] : env) cmd.insert(cmd.end(), {"-x", name});
  } else if (kind == LauncherKind::Mpich) {
    for (const auto& [name, value] : env) cmd.insert(cmd.end(), {"-genv", name, value});
  } else if (!env.empty()) {
    std::string exports = "--export=ALL";
    bool comma = false;
    for (const auto& [name, value] : env) comma = comma || value.find(',') != std::string::npos;
    if (!comma) {
      for (const auto& [name, value] : env) exports += "," + name + "=" + value;
    }
    cmd.push_back(exports);
  }
  cmd.insert(cmd.end(), program.begin(), program.end());
  return cmd;
}

namespace {

// Test-only: with COMMBENCH_TEST_JOB_LOG=FILE, each job's command line (after the program) is
// appended to FILE as a JSON array, one job per line, so that tests can see what a job was given.
void log_job_for_tests(const std::vector<std::string>& program) {
  const char* log = std::getenv("COMMBENCH_TEST_JOB_LOG");
  if (log == nullptr || *log == '\0') return;
  std::ofstream out(log, std::ios::app);
  out << nlohmann::json(std::vector<std::string>(program.begin() + 1, program.end())).dump()
      << "\n";
}

}  // namespace

JobOutcome run_job(const JobSpec& spec) {
  TempDir dir;
  // The job's document, its stderr and its ranks' status go there: a full TMPDIR is named as
  // such, not lost with the lines that would have said it.
  dir.check_writable("temporary");
  const std::string json = dir.path() + "/job.json", jsonl = dir.path() + "/job.jsonl";
  const std::string err = dir.path() + "/stderr";
  std::vector<std::string> program = {own_executable()};
  program.insert(program.end(), spec.args.begin(), spec.args.end());
  if (spec.document) {
    program.insert(program.end(), {"--output", json});
  } else {
    program.insert(program.end(),
                   {"--output", json, "--output", jsonl, "--format", "csv", "--progress", "never"});
  }
  log_job_for_tests(program);
  std::vector<std::string> command = program;
  EnvList env = spec.env;
  const std::string status_dir = dir.path() + "/ranks";
  std::optional<RankWatch> watch;
  if (!spec.launch_prefix.empty()) {
    if (::mkdir(status_dir.c_str(), 0700) == 0) {
      watch.emplace(status_dir);
      env.emplace_back(kRankStatusEnv, status_dir);
      if (!watch->path().empty()) env.emplace_back(kRankWatchEnv, watch->path());
    }
    command = launcher_command(
        spec.launch_prefix, launcher_kind(spec.launch_prefix[0], build_mpi_flavor()), env, program);
  }

  StopSignals signals;
  const auto start = std::chrono::steady_clock::now();
  const pid_t self = ::getpid();
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t pid = ::fork();
  if (pid < 0) runtime_error("cannot start a job: fork failed: {}", std::strerror(errno));
  if (pid == 0) exec_child(command, env, dir.path(), err, self);

  JobOutcome out;
  const bool launched = !spec.launch_prefix.empty();
  const double bound = watch && !watch->path().empty() ? launch_startup_bound(spec.timeout) : 0;
  bool never_started = false;
  auto started = [&] { return !watch->hosts().empty() || has_content(jsonl); };
  int status = wait_for(pid, signals, out.interrupted, bound, started, never_started);
  out.seconds = seconds_since(start);
  if (WIFSIGNALED(status)) {
    out.exit_code = 1;
  } else {
    int code = WEXITSTATUS(status);
    out.exit_code = code <= 5 ? code : 1;
  }
  bool rank_reported = read_diagnostics(read_text(err), out);
  const std::string launcher = launched ? base_name(spec.launch_prefix[0]) : "";
  if (watch && out.exit_code != 0) {
    rank_reported = judge_watched_ranks(status_dir, *watch, out, launcher) || rank_reported;
  }
  if (WIFSIGNALED(status) && out.message.empty()) {
    out.message = fmt::format("the job was killed by signal {} ({})", WTERMSIG(status),
                              ::strsignal(WTERMSIG(status)));
  } else if (!WIFSIGNALED(status) && WEXITSTATUS(status) > 5 && out.message.empty()) {
    out.message = fmt::format("the job exited with code {}", WEXITSTATUS(status));
  }
  if (launched && !WIFSIGNALED(status)) {
    // Only the ranks speak for commbench: a launcher's own exit code is never a verdict.
    const int code = WEXITSTATUS(status);
    const std::string said = out.launcher_said.empty() ? "" : ": " + out.launcher_said;
    const int mapped = launcher_job_exit_code(code, rank_reported);
    if (code >= kExitUsage && code <= kExitRegression && mapped != code) {
      out.exit_code = mapped;
      out.message = fmt::format("{} exited with code {} and no rank reported a verdict{}", launcher,
                                code, said);
    } else if (code == 0 && !has_content(json)) {
      out.exit_code = kExitRuntime;
      out.message =
          watch && watch->hosts().empty()
              ? fmt::format("{} ended (exit 0) without starting any rank{}", launcher, said)
              : fmt::format("{} ended (exit 0) but rank 0 wrote no results{}", launcher, said);
    }
  }
  if (never_started) {
    out.exit_code = kExitTimeout;
    out.message = fmt::format(
        "{} started no rank within {:g} s (--timeout {:g} s plus as long again, at least 10 s, for "
        "the launcher's start-up); it was stopped with everything it started{}",
        launcher, bound, spec.timeout,
        out.launcher_said.empty() ? "" : ": it said: " + out.launcher_said);
  }
  if (out.interrupted) {
    out.exit_code = 1;
    out.message = fmt::format("interrupted by signal {} ({}); the job was stopped", out.interrupted,
                              ::strsignal(out.interrupted));
  }
  out.records = read_text(jsonl);
  if (out.exit_code == 0 || out.exit_code == 3) out.document = read_text(json);
  return out;
}

}  // namespace cb
