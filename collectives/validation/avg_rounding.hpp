// How an average over n ranks rounds, element type by element type, so the avg validation
// pattern can pick inputs whose result is the same whichever way a library computes it:
//   premultiply (NCCL on floating types): each input times 1/n rounded to the type, then a sum.
//     The scale is 1.0/n in double, rounded to float, then to the type. The product rounds once
//     to the type (__hmul for half and bfloat16), except fp8, which multiplies in half and then
//     rounds the half product to fp8.
//   sum then divide (NCCL on integer types, and the obvious implementation elsewhere): the sum
//     of the inputs divided by n, rounded to the type.
#pragma once

#include <optional>

#include "collectives/catalogue/dtype.hpp"

namespace cb::avg {

// `v` rounded to the nearest value of floating type `t`, ties to even (subnormals kept, fp8
// saturating at its largest finite value). Integer types: `v` unchanged.
double round_to(DType t, double v);
// The largest finite value and the smallest normal value of floating type `t`.
double largest(DType t);
double smallest_normal(DType t);

// The scale NCCL multiplies each input by for an average over n ranks.
double nccl_scale(DType t, int n);
// One input after NCCL's premultiplication.
double premultiply(DType t, double x, int n);
// x / n rounded to `t`, or nothing when the quotient lies so close to a rounding boundary that
// an implementation dividing in a wider type and rounding twice could land elsewhere.
std::optional<double> divide(DType t, double x, int n);

}  // namespace cb::avg
