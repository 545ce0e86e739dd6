#include "collectives/patterns/ddp_buckets.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/error.hpp"

namespace cb {

std::uint64_t ddp_bucket_bytes(double mb, const char* what) {
  // int(mb * 1024 * 1024): Python's int() truncates toward zero.
  const double bytes = std::trunc(mb * 1024.0 * 1024.0);
  if (!(mb > 0) || !std::isfinite(mb) || bytes < 1 ||
      bytes > static_cast<double>(std::numeric_limits<std::int64_t>::max())) {
    usage_error("invalid {} '{:g}': expected MiB > 0 (at least one byte)", what, mb);
  }
  return static_cast<std::uint64_t>(bytes);
}

std::vector<std::size_t> gradient_ready_order(std::size_t nparams) {
  std::vector<std::size_t> order(nparams);
  for (std::size_t i = 0; i < nparams; ++i) order[i] = nparams - 1 - i;
  return order;
}

std::vector<DdpBucket> ddp_buckets(const std::vector<Param>& params, std::uint64_t first_bytes,
                                   std::uint64_t cap_bytes) {
  const std::uint64_t limits[] = {first_bytes, cap_bytes};
  struct Filling {
    DdpBucket bucket;
    int limit = 0;  // index into limits
  };
  std::map<DType, Filling> filling;
  std::vector<DType> first_seen;  // dtypes in order of their first parameter
  std::vector<DdpBucket> out;
  for (std::size_t i : gradient_ready_order(params.size())) {
    const Param& p = params[i];
    auto [it, fresh] = filling.try_emplace(p.dtype);
    if (fresh) first_seen.push_back(p.dtype);
    Filling& f = it->second;
    f.bucket.dtype = p.dtype;
    f.bucket.params.push_back(i);
    f.bucket.numel += p.numel;
    f.bucket.bytes += p.numel * info(p.dtype).size;
    if (f.bucket.bytes >= limits[f.limit]) {
      out.push_back(std::move(f.bucket));
      f.bucket = DdpBucket{};
      f.limit = 1;
    }
  }
  for (auto t = first_seen.rbegin(); t != first_seen.rend(); ++t) {
    DdpBucket& rest = filling.at(*t).bucket;
    if (!rest.params.empty()) out.push_back(std::move(rest));
  }
  return out;
}

}  // namespace cb
