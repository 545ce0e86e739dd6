// The nccl backend's registry entry, built with or without CUDA; without, it reports that
// (no_cuda.cpp).
#include "collectives/backends/nccl/nccl_entry.hpp"

#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/backends/nccl/nccl_choices.hpp"
#include "collectives/backends/nccl/nccl_policy.hpp"
#include "collectives/backends/nccl/nccl_tuning.hpp"

namespace cb {

BackendEntry nccl_entry() {
  return {.name = "nccl",
          .description = "NCCL collectives on GPU memory (libnccl loaded at run time)",
          .unavailable_reason = nccl::unavailable_reason,
          .create = nccl::make_backend,
          .check_options =
              [](const BackendOptions& o) { nccl::cuda_graph_calls(o.flag("--cuda-graph")); },
          .check_choices = nccl::check_run_choices,
          .version_lines =
              [](const BackendOptions& o) { return nccl::version_lines(o.flag("--nccl-lib")); },
          .gpu = true,
          .library_name = "NCCL",
          .roof = RoofModel::GpuLinks,
          .tuning_files = {{"--emit-nccl-tuner",
                            "write an NCCL tuner-plugin configuration (CSV) for the nccl results",
                            nccl::nccl_tuner_file}},
          .flags = {{"--nccl-lib",
                     "libnccl to load (file or directory; default COMMBENCH_NCCL_LIB, then "
                     "search)",
                     true},
                    {"--cuda-graph",
                     "N: capture N calls of each case in a CUDA graph and time its launches "
                     "(time_us stays per call), as PyTorch with CUDA graphs runs them",
                     false, false}},
          .peer_messages = nccl::peer_messages()};
}

}  // namespace cb
