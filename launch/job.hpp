// A whole commbench sweep as a fresh job: a child commbench process (which starts its ranks with
// the local launcher or its own MPI re-execution), or the same program under a user's launcher
// prefix (`--launch 'mpirun -np 16 --hostfile hosts'`, `srun -N 2`), with extra environment set
// on every rank. The job writes its records into a private temporary directory; the caller gets
// them back as text together with the job's exit code, mapped to commbench's own (0-5).
// commbench stays the parent: a signal to it stops the job and is reported.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/environment.hpp"

namespace cb {

enum class LauncherKind { OpenMpi, Mpich, Slurm };

struct JobSpec {
  std::vector<std::string> args;  // commbench's arguments after the program name: {"run", ...}
  EnvList env;                    // set on every rank
  std::vector<std::string> launch_prefix;  // empty: commbench starts the ranks itself
  double timeout = 300;   // the job's --timeout, seconds: bounds a launcher's start-up
  bool document = false;  // a one-document command (probe links): only --output FILE.json
};

struct JobOutcome {
  int exit_code = 0;     // 0 ok, 1 runtime, 2 usage, 3 validation, 4 timeout, 5
  std::string message;   // the job's verdict line (without "commbench: "), or how it ended
  int interrupted = 0;   // the signal that stopped commbench while the job ran, else 0
  std::string document;  // the job's JSON result document; empty when it did not finish
  std::string records;   // the job's streamed JSONL records (what finished, even on failure)
  std::vector<std::string> diagnostics;  // the job's other stderr lines (notes, warnings)
  std::string launcher_said;  // what the launcher or MPI library said (first_meaningful_message)
  double seconds = 0;         // wall time of the job
};

// Runs one job and waits for it. Throws a runtime Error only when it cannot be started at all.
// Under a launcher prefix: a launcher that starts no rank within the start-up bound
// (launch_startup_bound) is stopped with its whole process group (exit 4); one that ends with
// 0 without starting ranks, or with 2-5 that no rank reported, failed (exit 1, naming it).
JobOutcome run_job(const JobSpec& spec);

// Splits a launcher prefix into words as a POSIX shell would without expansions: blanks
// separate, single quotes keep everything, double quotes keep all but \" and \\, a backslash
// escapes the next character. Throws a usage Error on an unterminated quote or an empty prefix.
std::vector<std::string> split_command(const std::string& text);

// Which launcher a prefix's first word is: srun, an Open MPI mpirun/mpiexec/orterun/prterun, or
// MPICH's mpiexec(.hydra|.mpich). Plain mpirun/mpiexec is resolved through PATH and symbolic
// links (Debian's alternatives), else taken to be the MPI this build uses. Throws a usage Error
// for anything else.
LauncherKind launcher_kind(const std::string& program, const std::string& build_flavor);
// Usage error when `program` is neither an executable path nor found on PATH: a launcher that
// cannot start is the user's input, not a failure of the run.
void check_launcher_exists(const std::string& program);

// The full command of a job under a launcher prefix: the prefix, the options that pass `env` to
// every rank (Open MPI: -x NAME; MPICH: -genv NAME VALUE; srun: --export=ALL,NAME=VALUE, or
// --export=ALL when a value holds a comma), then `program`. The variables are also set in the
// launcher's own environment by run_job, which the -x and --export=ALL forms read.
std::vector<std::string> launcher_command(const std::vector<std::string>& prefix, LauncherKind kind,
                                          const EnvList& env,
                                          const std::vector<std::string>& program);

// How long a launcher may take to start its first rank: the run's --timeout (which then bounds
// each rank's own start-up) plus as long again for the launcher's own (ssh to other hosts,
// allocation), at least 10 s: 15 s for --timeout 5, 600 s for the default 300.
double launch_startup_bound(double timeout_s);

// This program's executable path (from /proc/self/exe).
std::string own_executable();

}  // namespace cb
