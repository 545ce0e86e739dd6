// PyTorch DDP's gradient buckets, as its Reducer rebuilds them after the first iteration and uses
// for every step after it (torch/csrc/distributed/c10d/reducer.cpp, v1.13.1:
// Reducer::rebuild_buckets and compute_bucket_assignment_by_size; docs/replay.md names the lines):
//
// - parameters are taken in the order their gradients become ready, which commbench takes as
//   the reverse of `model.parameters()` order (the order DDP itself assumes for its first
//   buckets; exact for a model whose forward uses its parameters in definition order);
// - each dtype fills a bucket of its own; a parameter is added, then the bucket closes once its
//   size is >= the current limit, so a bucket may exceed the limit by one tensor;
// - the limits are [first bucket, cap]: each dtype's first bucket closes at the first limit,
//   every later one at the cap;
// - buckets are listed as they close; the partly filled ones left at the end follow, one per
//   dtype, in reverse order of each dtype's first parameter (the iteration order of the
//   Reducer's hash map in PyTorch 1.13.1 with libstdc++, checked against it for every
//   permutation of up to 5 of 8 dtypes);
// - the Reducer issues bucket i's allreduce once all of its gradients are ready and buckets
//   0..i-1 have been issued (Reducer::mark_bucket_ready).
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/patterns/model.hpp"

namespace cb {

// DDP's defaults: dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB) and bucket_cap_mb=25.
inline constexpr std::uint64_t kDdpFirstBucketBytes = 1024 * 1024;
inline constexpr double kDdpBucketCapMb = 25;

// bucket_cap_mb as DDP converts it: int(mb * 1024 * 1024) bytes. A usage Error naming `what`
// unless 0 < mb and the bytes fit.
std::uint64_t ddp_bucket_bytes(double mb, const char* what);

struct DdpBucket {
  DType dtype = DType::Float;
  std::vector<std::size_t> params;  // indices into model.params, in gradient-ready order
  std::uint64_t numel = 0;
  std::uint64_t bytes = 0;
};

// The buckets in the order DDP issues them.
std::vector<DdpBucket> ddp_buckets(const std::vector<Param>& params, std::uint64_t first_bytes,
                                   std::uint64_t cap_bytes);

// The gradient-ready order commbench replays: the reverse of `model.parameters()` order.
std::vector<std::size_t> gradient_ready_order(std::size_t nparams);

}  // namespace cb
