// Element types and reduction operators, described once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cb {

enum class DType {
  Int8,
  Uint8,
  Int32,
  Uint32,
  Int64,
  Uint64,
  Half,
  BFloat16,
  Float,
  Double,
  Fp8E4M3,
  Fp8E5M2
};

enum class ReduceOp { Sum, Prod, Min, Max, Avg, None };

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
  // Largest integer N such that every integer in [0, N] is exactly representable; validation
  // patterns keep every partial result below it so reductions are exact in any order.
  std::int64_t exact_limit;
  bool floating;
};

const DTypeInfo& info(DType t);
const std::vector<DTypeInfo>& all_dtypes();
std::optional<DType> parse_dtype(std::string_view name);  // accepts aliases (fp32, char, ...)

std::string_view name(ReduceOp op);
const std::vector<ReduceOp>& all_ops();  // excluding None
std::optional<ReduceOp> parse_op(std::string_view name);

// Encodes a small non-negative integer (< exact_limit) as `type`, little-endian, into `out`.
void encode_integer(DType type, std::int64_t value, void* out);
// Encodes a value `type` holds exactly (fractions included; half subnormals excepted).
void encode_value(DType type, double value, void* out);
// Decodes a value of `type` into a double (used for messages and tests).
double decode_value(DType type, const void* in);

}  // namespace cb
