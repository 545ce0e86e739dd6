#include "collectives/validation/pattern.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>

#include "collectives/validation/avg_rounding.hpp"

namespace cb {

const unsigned char kUnwrittenMarker = 0xFF;

namespace {

std::int64_t clamp_modulus(std::int64_t m) {
  return std::clamp<std::int64_t>(m, 1, 64);
}

using AvgValues = std::vector<std::pair<double, double>>;

// (input, average) pairs for one rank holding `input` and n - 1 ranks holding zero. Integers:
// multiples of n. Floating types: values m * 2^e whose premultiplied and divided averages agree
// and stay normal (a kernel may flush subnormals to zero). Empty when none qualifies (fp8 and
// bfloat16 at some large rank counts): the inputs are then all zero.
AvgValues make_avg_values(DType t, int n) {
  AvgValues out;
  if (!info(t).floating) {
    // Below the exact limit: an unsigned type's largest value is kUnwrittenMarker's element.
    const std::int64_t top = std::min<std::int64_t>((info(t).exact_limit - 1) / n, 100);
    for (std::int64_t e = 1; e <= top; ++e) {
      out.emplace_back(static_cast<double>(e * n), static_cast<double>(e));
    }
    return out;
  }
  std::set<double> inputs;
  for (int m = 1; m <= 64; ++m) {
    for (int e = -6; e <= 6; ++e) inputs.insert(std::ldexp(m, e));
  }
  for (double x : inputs) {
    if (avg::round_to(t, x) != x || x < avg::smallest_normal(t) || x > avg::largest(t) / 4) {
      continue;
    }
    const double premultiplied = avg::premultiply(t, x, n);
    const std::optional<double> divided = avg::divide(t, x, n);
    if (divided && *divided == premultiplied && premultiplied >= avg::smallest_normal(t)) {
      out.emplace_back(x, premultiplied);
    }
  }
  return out;
}

const AvgValues* avg_values(DType t, int n) {
  static std::mutex mu;
  static std::map<std::pair<DType, int>, AvgValues> cache;
  std::lock_guard lock(mu);
  auto it = cache.find({t, n});
  if (it == cache.end()) it = cache.emplace(std::pair{t, n}, make_avg_values(t, n)).first;
  return &it->second;
}

}  // namespace

Pattern::Pattern(DType dtype, ReduceOp op, int nranks, std::uint64_t seed)
    : dtype_(dtype), op_(op), nranks_(std::max(1, nranks)), seed_(seed % 1000003) {
  // One below the exact limit, so that no value reaches an unsigned type's largest, which is
  // kUnwrittenMarker's element.
  const std::int64_t limit = info(dtype).exact_limit - 1;
  const std::int64_t n = nranks_;
  switch (op_) {
    case ReduceOp::Sum:  // values in [0, m): a sum over n ranks stays <= limit
      modulus_ = clamp_modulus(limit / n + 1);
      break;
    case ReduceOp::Avg:
      modulus_ = 1;
      avg_values_ = avg_values(dtype, nranks_);
      break;
    case ReduceOp::Prod:  // values 1 or 2, at most one rank holds a 2 at any index
      modulus_ = n + 1;
      break;
    default:  // min, max and data movement: any value the type holds exactly
      modulus_ = std::min<std::int64_t>(limit + 1, 101);
      break;
  }
}

int Pattern::avg_holder(std::uint64_t k) const {
  return static_cast<int>((k * 3 + seed_) % static_cast<std::uint64_t>(nranks_));
}

double Pattern::avg_input(std::uint64_t k) const {
  if (avg_values_->empty()) return 0;
  return (*avg_values_)[(k * 7 + seed_ * 5) % avg_values_->size()].first;
}

double Pattern::avg_result(std::uint64_t k) const {
  if (avg_values_->empty()) return 0;
  return (*avg_values_)[(k * 7 + seed_ * 5) % avg_values_->size()].second;
}

double Pattern::input_value(int rank, std::uint64_t index) const {
  const std::uint64_t k = index % kPeriod;
  const std::uint64_t q = static_cast<std::uint64_t>(rank);
  const std::uint64_t m = static_cast<std::uint64_t>(modulus_);
  switch (op_) {
    case ReduceOp::Sum:
      return static_cast<double>((k * 5 + q * 3 + seed_) % m);
    case ReduceOp::Avg:
      return rank == avg_holder(k) ? avg_input(k) : 0.0;
    case ReduceOp::Prod:
      return (k * 3 + q + seed_) % m == 0 ? 2 : 1;
    default:
      return static_cast<double>((k * 7 + q * 13 + seed_ * 5) % m);
  }
}

double Pattern::reduced_value(std::uint64_t index) const {
  if (op_ == ReduceOp::Avg) return avg_result(index % kPeriod);
  double acc = input_value(0, index);
  for (int q = 1; q < nranks_; ++q) {
    double v = input_value(q, index);
    switch (op_) {
      case ReduceOp::Sum:
      case ReduceOp::Avg:
        acc += v;
        break;
      case ReduceOp::Prod:
        acc *= v;
        break;
      case ReduceOp::Min:
        acc = std::min(acc, v);
        break;
      case ReduceOp::Max:
        acc = std::max(acc, v);
        break;
      case ReduceOp::None:
        break;
    }
  }
  return acc;
}

PeriodicTable Pattern::encode(std::vector<std::byte>& storage, auto value_of) {
  const std::size_t es = info(dtype_).size;
  if (storage.empty()) {
    storage.resize(2 * kPeriod * es);
    for (std::size_t k = 0; k < kPeriod; ++k) encode_value(dtype_, value_of(k), &storage[k * es]);
    std::memcpy(&storage[kPeriod * es], storage.data(), kPeriod * es);
  }
  return {storage.data(), es, kPeriod};
}

PeriodicTable Pattern::input_table(int rank) {
  return encode(inputs_[rank], [&](std::size_t k) { return input_value(rank, k); });
}

PeriodicTable Pattern::reduced_table() {
  return encode(reduced_, [&](std::size_t k) { return reduced_value(k); });
}

void fill_periodic(void* dst, std::uint64_t count, const PeriodicTable& t,
                   std::uint64_t src_offset) {
  auto* out = static_cast<std::byte*>(dst);
  const std::byte* window = t.data + (src_offset % t.period) * t.element_size;
  const std::size_t chunk = t.period * t.element_size;
  std::uint64_t bytes = count * t.element_size;
  while (bytes >= chunk) {
    std::memcpy(out, window, chunk);
    out += chunk;
    bytes -= chunk;
  }
  std::memcpy(out, window, bytes);
}

std::uint64_t count_wrong_periodic(const void* buf, std::uint64_t count, const PeriodicTable& t,
                                   std::uint64_t src_offset) {
  const auto* in = static_cast<const std::byte*>(buf);
  const std::byte* window = t.data + (src_offset % t.period) * t.element_size;
  const std::size_t es = t.element_size;
  std::uint64_t wrong = 0;
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min<std::uint64_t>(t.period, count - done);
    const std::byte* got = in + done * es;
    if (std::memcmp(got, window, n * es) != 0) {
      for (std::uint64_t i = 0; i < n; ++i) {
        wrong += std::memcmp(got + i * es, window + i * es, es) != 0;
      }
    }
    done += n;
  }
  return wrong;
}

}  // namespace cb
