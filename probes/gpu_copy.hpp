// `probe copy`: GPU copy-engine bandwidth like nvbandwidth's *_ce tests: host to device and
// device to host (pinned and pageable host memory), device to device, and the peer-to-peer
// matrix. The measuring part is CUDA (gpu_copy_cuda.cu) and is absent from builds without it;
// this header stays plain C++17 so that nvcc compiles it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cb {

struct GpuCopyOptions {
  std::uint64_t bytes = 256ULL << 20;  // per copy
  int repeats = 5;                     // median reported
  bool host = true;                    // H2D and D2H
  bool device = true;                  // D2D
  bool peer = true;                    // P2P matrix
};

struct GpuCopyDevice {
  int index = 0;
  std::string name;
  std::string bdf;
  std::optional<double> h2d_pinned, h2d_pageable, d2h_pinned, d2h_pageable, d2d;  // GB/s
};

struct GpuCopyResult {
  std::string error;    // set when nothing could be measured ("no CUDA device is visible ...")
  std::string runtime;  // "CUDA runtime 13.0, driver 12.8"
  std::vector<GpuCopyDevice> devices;
  std::vector<std::vector<std::optional<double>>> p2p;  // [src][dst] GB/s; null: no peer access
};

// Measures; on failure returns with `error` set (the caller turns it into a runtime Error).
GpuCopyResult run_gpu_copy(const GpuCopyOptions& options);

}  // namespace cb
