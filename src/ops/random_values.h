#pragma once
// The value of element i of rand / randn / randint / arange, shared by the CPU loop and the CUDA
// kernel (host and device code), so a seed gives the same tensor on every device.

#include <math.h>

#include <cstdint>

#include "locus/dtype.h"
#include "src/ops/op_id.h"
#include "src/ops/philox.h"

namespace locus::runtime {

/// Uniform in [0, 1) with 53 random bits.
LOCUS_HOST_DEVICE inline double uniform53(uint32_t lo, uint32_t hi) {
  return static_cast<double>(((uint64_t{hi} << 32) | lo) >> 11) * 0x1.0p-53;
}

/// Element `i` as a double, before conversion to a dtype whose significand has
/// `mantissa_bits` bits (53, 24, 11 or 8). Rand draws only that many bits, so rounding never
/// reaches 1; Randn is Box-Muller; Randint is in [low, high); Arange is low + i * high (step).
LOCUS_HOST_DEVICE inline double random_value(ops::OpId op, int mantissa_bits, uint64_t seed, uint64_t offset, int64_t i,
                                             double low, double high) {
  if (op == ops::OpId::Arange) return low + static_cast<double>(i) * high;
  const Philox4 r = philox4x32(seed, offset + static_cast<uint64_t>(i));
  if (op == ops::OpId::Rand)
    return mantissa_bits >= 53 ? uniform53(r[0], r[1])
                               // times 2^-bits, exactly (ldexp's libm call was most of dropout's time)
                               : static_cast<double>(r[0] >> (32 - mantissa_bits)) / static_cast<double>(uint64_t{1} << mantissa_bits);
  if (op == ops::OpId::Randn) {
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    const double u1 = 1.0 - uniform53(r[0], r[1]);  // (0, 1]: log stays finite
    return ::sqrt(-2.0 * ::log(u1)) * ::cos(kTwoPi * uniform53(r[2], r[3]));
  }
  const auto range = static_cast<uint64_t>(high - low);
  return low + static_cast<double>(((uint64_t{r[1]} << 32) | r[0]) % range);
}

/// The bits of the significand of `dtype`'s elements (53, 24, 11 or 8); 24 for the integer
/// types, which take Randint and Arange only.
LOCUS_HOST_DEVICE constexpr int mantissa_bits(DType dtype) {
  return dtype == DType::Float64 ? 53 : dtype == DType::Float16 ? 11 : dtype == DType::BFloat16 ? 8 : 24;
}

/// Element `i` of the tensor that `a` (ops::RandomArgs) describes, scaled as its op asks: rand's
/// range [low, high) (uniform_: low + (high - low) u) and randn's mean and standard deviation
/// (normal_: low + high z). `bits` is mantissa_bits(a.dtype), taken once per kernel. Both
/// kernels call this, so the scaling is written once.
template <class Args>
LOCUS_HOST_DEVICE inline double random_element(const Args& a, int bits, int64_t i) {
  const double v = random_value(a.op, bits, a.seed, a.offset, i, a.low, a.high);
  if (a.op == ops::OpId::Rand) return a.low + (a.high - a.low) * v;
  if (a.op == ops::OpId::Randn) return a.low + a.high * v;
  return v;
}

}  // namespace locus::runtime
