#include "collectives/pattern.hpp"

#include <algorithm>
#include <cstring>

namespace cb {

namespace {

std::int64_t clamp_modulus(std::int64_t m) {
  return std::clamp<std::int64_t>(m, 1, 64);
}

}  // namespace

Pattern::Pattern(DType dtype, ReduceOp op, int nranks, std::uint64_t seed)
    : dtype_(dtype), op_(op), nranks_(std::max(1, nranks)), seed_(seed % 1000003) {
  const std::int64_t limit = info(dtype).exact_limit;
  const std::int64_t n = nranks_;
  switch (op_) {
    case ReduceOp::Sum:  // values in [0, m): a sum over n ranks stays <= limit
      modulus_ = clamp_modulus(limit / n + 1);
      break;
    case ReduceOp::Avg:  // values are n x [0, m): the sum is n x S, so the average S is exact
      modulus_ = clamp_modulus(limit / (n * n) + 1);
      break;
    case ReduceOp::Prod:  // values 1 or 2, at most one rank holds a 2 at any index
      modulus_ = n + 1;
      break;
    default:  // min, max and data movement: any value the type holds exactly
      modulus_ = std::min<std::int64_t>(limit + 1, 101);
      break;
  }
}

std::int64_t Pattern::input_value(int rank, std::uint64_t index) const {
  const std::uint64_t k = index % kPeriod;
  const std::uint64_t q = static_cast<std::uint64_t>(rank);
  const std::uint64_t m = static_cast<std::uint64_t>(modulus_);
  switch (op_) {
    case ReduceOp::Sum:
      return static_cast<std::int64_t>((k * 5 + q * 3 + seed_) % m);
    case ReduceOp::Avg:
      return nranks_ * static_cast<std::int64_t>((k * 5 + q * 3 + seed_) % m);
    case ReduceOp::Prod:
      return (k * 3 + q + seed_) % m == 0 ? 2 : 1;
    default:
      return static_cast<std::int64_t>((k * 7 + q * 13 + seed_ * 5) % m);
  }
}

std::int64_t Pattern::reduced_value(std::uint64_t index) const {
  std::int64_t acc = input_value(0, index);
  for (int q = 1; q < nranks_; ++q) {
    std::int64_t v = input_value(q, index);
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
  return op_ == ReduceOp::Avg ? acc / nranks_ : acc;
}

PeriodicTable Pattern::encode(std::vector<std::byte>& storage, auto value_of) {
  const std::size_t es = info(dtype_).size;
  if (storage.empty()) {
    storage.resize(2 * kPeriod * es);
    for (std::size_t k = 0; k < kPeriod; ++k) encode_integer(dtype_, value_of(k), &storage[k * es]);
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
