// `probe copy` output: the commbench/gpucopy/v1 document and its tables.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>

#include "probes/gpu_copy.hpp"

namespace cb {

// Runs the probe; a runtime Error ("no CUDA device is visible ...") when nothing can be measured.
GpuCopyResult measure_gpu_copy(const GpuCopyOptions& options);
nlohmann::json gpu_copy_to_json(const GpuCopyResult& r, const GpuCopyOptions& options);
void print_gpu_copy(const GpuCopyResult& r, const GpuCopyOptions& options, std::ostream& out);

}  // namespace cb
