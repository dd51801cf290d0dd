#pragma once
// DType -> C++ type dispatch for CPU kernels.

#include <cstdint>
#include <type_traits>

#include "locus/dtype.h"
#include "locus/errors.h"
#include "locus/half.h"

namespace locus::cpu {

/// The type arithmetic happens in: float for the 16-bit floats, the type itself otherwise.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

}  // namespace locus::cpu

#define LOCUS_CASE(dt, type, ...) \
  case ::locus::DType::dt: {      \
    using scalar_t = type;        \
    __VA_ARGS__;                  \
    break;                        \
  }

/// Runs the body with `scalar_t` bound to the C++ type of `dtype` (all ten types).
#define LOCUS_DISPATCH_ALL(dtype, ...)                                         \
  switch (dtype) {                                                             \
    LOCUS_CASE(Bool, bool, __VA_ARGS__)                                        \
    LOCUS_CASE(UInt8, uint8_t, __VA_ARGS__)                                    \
    LOCUS_CASE(Int8, int8_t, __VA_ARGS__)                                      \
    LOCUS_CASE(Int16, int16_t, __VA_ARGS__)                                    \
    LOCUS_CASE(Int32, int32_t, __VA_ARGS__)                                    \
    LOCUS_CASE(Int64, int64_t, __VA_ARGS__)                                    \
    LOCUS_CASE(Float16, ::locus::Half, __VA_ARGS__)                            \
    LOCUS_CASE(BFloat16, ::locus::BFloat16, __VA_ARGS__)                       \
    LOCUS_CASE(Float32, float, __VA_ARGS__)                                    \
    LOCUS_CASE(Float64, double, __VA_ARGS__)                                   \
  }

/// The four floating types only; anything else is a front-end bug.
#define LOCUS_DISPATCH_FLOATING(dtype, ...)                                    \
  switch (dtype) {                                                             \
    LOCUS_CASE(Float16, ::locus::Half, __VA_ARGS__)                            \
    LOCUS_CASE(BFloat16, ::locus::BFloat16, __VA_ARGS__)                       \
    LOCUS_CASE(Float32, float, __VA_ARGS__)                                    \
    LOCUS_CASE(Float64, double, __VA_ARGS__)                                   \
    default: throw ::locus::DTypeError("internal: floating kernel called with a non-floating dtype"); \
  }
