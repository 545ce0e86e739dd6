#include "report/record_key.hpp"

#include <fmt/format.h>

#include "common/units.hpp"

namespace cb {

RecordKey key_of(const ResultRecord& r) {
  return {r.collective, r.backend, r.algorithm, r.dtype, r.op,   r.placement,
          r.root,       r.nranks,  r.bytes,     r.env,   r.split};
}

std::string describe(const RecordKey& k) {
  std::string s = fmt::format("{} {}/{} {} {} {}", k.collective, k.backend, k.algorithm, k.dtype,
                              k.op, k.placement);
  if (!k.split.empty()) s += " " + k.split;
  if (k.root >= 0) s += fmt::format(" root {}", k.root);
  s += fmt::format(" {} ranks", k.nranks);
  if (k.collective != "barrier") s += fmt::format(" {}", format_size(k.bytes));
  if (!k.env.empty()) s += " [" + k.env + "]";
  return s;
}

}  // namespace cb
