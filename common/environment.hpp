// Environment variables by what they say about a run: which steer communication (written into a
// result's meta), which are a launcher's per-job bookkeeping, which look like secrets.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cb {

// Variables to set, NAME and VALUE, in order (a job's, a pass's environment).
using EnvList = std::vector<std::pair<std::string, std::string>>;

// Variables a launcher sets per job (ids, URIs, session directories): they differ on every run.
inline constexpr std::string_view kLauncherBookkeeping[] = {
    "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
    "OMPI_MCA_shmem_RUNTIME_QUERY_hint"};

// True when `name` starts with one of kLauncherBookkeeping.
inline bool launcher_bookkeeping(std::string_view name) {
  for (auto p : kLauncherBookkeeping) {
    if (name.substr(0, p.size()) == p) return true;
  }
  return false;
}

// Whether an environment variable's name looks like it holds a secret: KEY, TOKEN, SECRET, PASS,
// CREDENTIAL, AUTH or PRIVATE anywhere in it, in any case. Such values are never written.
bool secret_name(std::string_view name);

// `text` (a command line, a launcher prefix) with the value of every NAME=VALUE assignment whose
// NAME is secret_name() replaced by `***`: `-x GLOO_AUTH_TOKEN=abc`, `TOKEN=abc mpirun`,
// `--env=API_KEY=abc`, and MPICH's `-genv API_KEY abc`. A quoted value is replaced up to its
// closing quote.
std::string redact_secret_values(std::string_view text);

// The environment variables that steer communication (NCCL_*, OMPI_MCA_*, MPIR_CVAR_*, UCX_*,
// CUDA_VISIBLE_DEVICES, ...), never the whole environment and never anything that looks secret.
std::map<std::string, std::string> steering_environment();
// Whether `name` is one of those variables.
bool steering_variable(std::string_view name);
// Lines naming each steering variable that differs between rank 0 and another rank, from every
// rank's steering_environment() as a JSON object (index = rank); at most 20.
std::vector<std::string> environment_mismatches(const std::vector<std::string>& per_rank);

}  // namespace cb
