// The env:// convention of torch.distributed, as torchrun, Kubeflow's PyTorchJob, JobSet and
// Volcano set it for every process they start: MASTER_ADDR and MASTER_PORT (where rank 0 serves
// the rendezvous), RANK and WORLD_SIZE, and optionally LOCAL_RANK and LOCAL_WORLD_SIZE (torchrun
// adds GROUP_RANK and TORCHELASTIC_* bookkeeping). Reading them is kept apart from the process
// environment so that every check can be tested.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace cb {

// Looks up one environment variable; null when it is not set.
using EnvLookup = std::function<const char*(const char*)>;

struct EnvLaunch {
  std::string master_addr;
  // Where rank 0 serves commbench's rendezvous: MASTER_PORT, or the port after it under
  // torchrun's static rendezvous, whose agent keeps MASTER_PORT for its own store
  // (TORCHELASTIC_USE_AGENT_STORE=True).
  int master_port = 0;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 0;  // 0: not given
};

// Whether this process was started the env:// way: RANK or WORLD_SIZE is set (MASTER_ADDR alone
// is often exported for every process of a container and says nothing about this one).
bool env_launch_requested(const EnvLookup& get);

// Reads the variables into `out`; returns what is wrong with them in one line (a variable
// missing, not an integer, RANK not below WORLD_SIZE, a port outside 1-65535, ...), or empty.
std::string read_env_launch(const EnvLookup& get, EnvLaunch& out);

// The variables of the convention that are set, by name, for the run's meta (none holds a
// secret; those whose name looks like one are left out all the same).
std::map<std::string, std::string> env_launch_variables(const EnvLookup& get);

// The process environment as an EnvLookup.
const char* process_env(const char* name);

}  // namespace cb
