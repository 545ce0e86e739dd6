// `run`'s options and execution, shared with `tune` (a run with extra analysis at the end).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "report/writer.hpp"

namespace cb {

// Option values as typed; validated by execute_run before any work starts.
struct RunRequest {
  std::string collectives = "all";
  std::string backends;
  std::string algorithms = "default";
  std::string min_bytes = "8";
  std::string max_bytes;
  std::string step_factor = "2";
  std::string step_bytes;
  std::string dtypes = "float";
  std::string ops = "sum";
  std::string placement = "out";
  std::string root = "0";
  std::string warmup;
  std::string iters;
  std::string min_time = "0.05";
  bool check = true;
  std::string memory;
  std::string nranks;
  std::string timeout = "300";
  std::string format = "table";
  std::vector<std::string> outputs;
  std::string progress = "auto";
  std::string gloo_iface;
  std::string nccl_lib;
  std::string gpus;
  // An extra writer on rank 0 (tune adds its analysis this way).
  std::function<std::unique_ptr<Writer>()> extra_writer;
};

void add_run_options(CLI::App* cmd, RunRequest& rq);
int execute_run(const RunRequest& rq);

}  // namespace cb
