#include "collectives/catalogue/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace cb {

namespace {

const std::vector<DTypeInfo> kTypes = {
    {DType::Int8, "int8", 1, 127, false},
    {DType::Uint8, "uint8", 1, 255, false},
    {DType::Int32, "int32", 4, (1LL << 31) - 1, false},
    {DType::Uint32, "uint32", 4, (1LL << 32) - 1, false},
    {DType::Int64, "int64", 8, (1LL << 62), false},
    {DType::Uint64, "uint64", 8, (1LL << 62), false},
    {DType::Half, "half", 2, 2048, true},
    {DType::BFloat16, "bfloat16", 2, 256, true},
    {DType::Float, "float", 4, 1LL << 24, true},
    {DType::Double, "double", 8, 1LL << 53, true},
    {DType::Fp8E4M3, "fp8_e4m3", 1, 16, true},
    {DType::Fp8E5M2, "fp8_e5m2", 1, 8, true},
};

struct Alias {
  std::string_view alias;
  DType type;
};
constexpr Alias kAliases[] = {
    {"char", DType::Int8},     {"uchar", DType::Uint8},    {"int", DType::Int32},
    {"uint", DType::Uint32},   {"fp16", DType::Half},      {"float16", DType::Half},
    {"bf16", DType::BFloat16}, {"fp32", DType::Float},     {"float32", DType::Float},
    {"fp64", DType::Double},   {"float64", DType::Double}, {"e4m3", DType::Fp8E4M3},
    {"e5m2", DType::Fp8E5M2},  {"f8e4m3", DType::Fp8E4M3}, {"f8e5m2", DType::Fp8E5M2},
};

const std::vector<ReduceOp> kOps = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max,
                                    ReduceOp::Avg};

std::uint16_t float_to_half_bits(float f) {
  // Exact for the small integers the patterns use; rounds toward zero otherwise.
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  std::uint32_t mant = x & 0x7fffffu;
  if (f == 0.0f) return static_cast<std::uint16_t>(sign);
  if (exp <= 0) return static_cast<std::uint16_t>(sign);
  if (exp >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13));
}

float half_bits_to_float(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0 && mant == 0) return std::bit_cast<float>(sign);
  if (exp == 0) return (sign ? -1.0f : 1.0f) * static_cast<float>(mant) / 16777216.0f;
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

// fp8: value = 2^(e - bias) * (1 + m / 2^mbits) for e > 0.
std::uint8_t int_to_fp8(std::int64_t v, int mbits, int bias) {
  if (v == 0) return 0;
  int e = 63 - std::countl_zero(static_cast<std::uint64_t>(v));
  std::uint64_t mant = (static_cast<std::uint64_t>(v) - (1ULL << e));
  mant = e >= mbits ? mant >> (e - mbits) : mant << (mbits - e);
  return static_cast<std::uint8_t>(((e + bias) << mbits) | mant);
}

// Any value fp8 holds exactly (normal or subnormal, either sign).
std::uint8_t exact_to_fp8(double v, int mbits, int bias) {
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0;
  v = std::fabs(v);
  if (v == 0) return sign;
  int e = 0;
  std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  int exp = e - 1 + bias;
  if (exp <= 0) {  // subnormal: v = mant * 2^(1 - bias - mbits)
    return static_cast<std::uint8_t>(sign | static_cast<int>(std::ldexp(v, bias - 1 + mbits)));
  }
  const int mant = static_cast<int>(std::ldexp(v, mbits - (e - 1))) - (1 << mbits);
  return static_cast<std::uint8_t>(sign | (exp << mbits) | mant);
}

double fp8_to_double(std::uint8_t b, int mbits, int bias) {
  int e = (b >> mbits) & ((1 << (7 - mbits)) - 1);
  int m = b & ((1 << mbits) - 1);
  double sign = (b & 0x80) ? -1.0 : 1.0;
  if (e == 0) return sign * m * std::ldexp(1.0, 1 - bias - mbits);
  return sign * std::ldexp(1.0 + m / static_cast<double>(1 << mbits), e - bias);
}

template <typename T>
void store(T v, void* out) {
  std::memcpy(out, &v, sizeof v);
}

template <typename T>
T load(const void* in) {
  T v;
  std::memcpy(&v, in, sizeof v);
  return v;
}

}  // namespace

const DTypeInfo& info(DType t) {
  return kTypes[static_cast<std::size_t>(t)];
}

const std::vector<DTypeInfo>& all_dtypes() {
  return kTypes;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& t : kTypes) {
    if (t.name == name) return t.type;
  }
  for (const auto& a : kAliases) {
    if (a.alias == name) return a.type;
  }
  return std::nullopt;
}

std::string_view name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Prod:
      return "prod";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Avg:
      return "avg";
    case ReduceOp::None:
      return "none";
  }
  return "none";
}

const std::vector<ReduceOp>& all_ops() {
  return kOps;
}

std::optional<ReduceOp> parse_op(std::string_view text) {
  for (ReduceOp op : kOps) {
    if (name(op) == text) return op;
  }
  return std::nullopt;
}

void encode_integer(DType type, std::int64_t v, void* out) {
  switch (type) {
    case DType::Int8:
      store(static_cast<std::int8_t>(v), out);
      break;
    case DType::Uint8:
      store(static_cast<std::uint8_t>(v), out);
      break;
    case DType::Int32:
      store(static_cast<std::int32_t>(v), out);
      break;
    case DType::Uint32:
      store(static_cast<std::uint32_t>(v), out);
      break;
    case DType::Int64:
      store(static_cast<std::int64_t>(v), out);
      break;
    case DType::Uint64:
      store(static_cast<std::uint64_t>(v), out);
      break;
    case DType::Half:
      store(float_to_half_bits(static_cast<float>(v)), out);
      break;
    case DType::BFloat16:
      store(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16),
            out);
      break;
    case DType::Float:
      store(static_cast<float>(v), out);
      break;
    case DType::Double:
      store(static_cast<double>(v), out);
      break;
    case DType::Fp8E4M3:
      store(int_to_fp8(v, 3, 7), out);
      break;
    case DType::Fp8E5M2:
      store(int_to_fp8(v, 2, 15), out);
      break;
  }
}

void encode_value(DType type, double v, void* out) {
  switch (type) {
    case DType::Half:
      store(float_to_half_bits(static_cast<float>(v)), out);
      break;
    case DType::BFloat16:
      store(static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) >> 16),
            out);
      break;
    case DType::Float:
      store(static_cast<float>(v), out);
      break;
    case DType::Double:
      store(v, out);
      break;
    case DType::Fp8E4M3:
      store(exact_to_fp8(v, 3, 7), out);
      break;
    case DType::Fp8E5M2:
      store(exact_to_fp8(v, 2, 15), out);
      break;
    default:
      encode_integer(type, static_cast<std::int64_t>(v), out);
      break;
  }
}

double decode_value(DType type, const void* in) {
  switch (type) {
    case DType::Int8:
      return load<std::int8_t>(in);
    case DType::Uint8:
      return load<std::uint8_t>(in);
    case DType::Int32:
      return load<std::int32_t>(in);
    case DType::Uint32:
      return load<std::uint32_t>(in);
    case DType::Int64:
      return static_cast<double>(load<std::int64_t>(in));
    case DType::Uint64:
      return static_cast<double>(load<std::uint64_t>(in));
    case DType::Half:
      return half_bits_to_float(load<std::uint16_t>(in));
    case DType::BFloat16:
      return std::bit_cast<float>(static_cast<std::uint32_t>(load<std::uint16_t>(in)) << 16);
    case DType::Float:
      return load<float>(in);
    case DType::Double:
      return load<double>(in);
    case DType::Fp8E4M3:
      return fp8_to_double(load<std::uint8_t>(in), 3, 7);
    case DType::Fp8E5M2:
      return fp8_to_double(load<std::uint8_t>(in), 2, 15);
  }
  return 0;
}

}  // namespace cb
