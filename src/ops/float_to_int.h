#pragma once
// Floating to integer conversion, defined for every value and the same on every device.
//
// Note [Float to int]
// C++ leaves a floating value outside the integer type's range (or NaN) undefined; x86 gives
// INT_MIN where CUDA saturates, so a plain cast made cpu and cuda disagree. Locus truncates
// toward zero, saturates at the type's limits and maps NaN to 0, on every device (PyTorch's
// result for such values depends on the platform). Conversions to bool are "not zero" (NaN is
// true), as in PyTorch.

#include <cstdint>
#include <limits>
#include <type_traits>

#include "src/ops/host_device.h"

namespace locus::ops {

template <class Int, class Float>
LOCUS_HD Int float_to_int(Float v) {
  static_assert(std::is_integral_v<Int> && !std::is_same_v<Int, bool> && std::is_floating_point_v<Float>);
  if (v != v) return Int(0);
  // Compared in double: every limit of an integer type up to 64 bits is a power of two away
  // from a representable value, so min is exact and max + 1 is exact.
  const double d = static_cast<double>(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hi_excl = static_cast<double>(std::numeric_limits<Int>::max()) + 1.0;
  if (d <= lo) return std::numeric_limits<Int>::min();
  if (d >= hi_excl) return std::numeric_limits<Int>::max();
  return static_cast<Int>(v);
}

}  // namespace locus::ops
