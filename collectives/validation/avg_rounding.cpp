#include "collectives/validation/avg_rounding.hpp"

#include <cfloat>
#include <cmath>

namespace cb::avg {

namespace {

struct Format {
  int precision;  // significand bits, the implicit one included
  int min_exponent;
  double largest;
  bool saturates;
};

Format format(DType t) {
  switch (t) {
    case DType::Half:
      return {11, -14, 65504.0, false};
    case DType::BFloat16:
      return {8, -126, std::ldexp(255.0, 120), false};
    case DType::Float:
      return {24, -126, FLT_MAX, false};
    case DType::Fp8E4M3:
      return {4, -6, 448.0, true};
    case DType::Fp8E5M2:
      return {3, -14, 57344.0, true};
    default:
      return {53, -1022, DBL_MAX, false};
  }
}

// v in units of the spacing of `t`'s values around v.
double in_quanta(const Format& f, double v, double* quantum) {
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  *quantum = std::ldexp(1.0, std::max(e - 1, f.min_exponent) - f.precision + 1);
  return v / *quantum;
}

}  // namespace

double round_to(DType t, double v) {
  if (!info(t).floating || t == DType::Double || v == 0 || !std::isfinite(v)) return v;
  const Format f = format(t);
  double quantum = 0;
  double r = std::nearbyint(in_quanta(f, v, &quantum)) * quantum;  // ties to even
  if (std::fabs(r) > f.largest) r = std::copysign(f.saturates ? f.largest : HUGE_VAL, v);
  return r;
}

double largest(DType t) {
  return format(t).largest;
}

double smallest_normal(DType t) {
  return std::ldexp(1.0, format(t).min_exponent);
}

double nccl_scale(DType t, int n) {
  const double s = 1.0 / n;
  if (t == DType::Double) return s;
  return round_to(t, static_cast<float>(s));
}

double premultiply(DType t, double x, int n) {
  const double s = nccl_scale(t, n);
  if (t == DType::Double) return x * s;
  // Inputs and scale have at most 24 significant bits, so x * s is exact in double.
  if (t == DType::Fp8E4M3 || t == DType::Fp8E5M2) return round_to(t, round_to(DType::Half, x * s));
  return round_to(t, x * s);
}

std::optional<double> divide(DType t, double x, int n) {
  if (!info(t).floating) {
    if (std::fmod(x, n) != 0) return std::nullopt;
    return x / n;
  }
  const double q = x / n;
  if (t == DType::Double) return q;
  double quantum = 0;
  const double units = in_quanta(format(t), q, &quantum);
  if (std::fabs(units - std::floor(units) - 0.5) < 0x1p-20) return std::nullopt;
  return round_to(t, q);
}

}  // namespace cb::avg
