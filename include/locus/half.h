#pragma once
/// \file half.h
/// Storage types for float16 and bfloat16. Arithmetic happens in float: these types only
/// convert, which is also what the CPU kernels do (load, compute in float, round on store).
/// Under nvcc (which compiles this header for the CUDA backend's host code) the portable
/// conversions stand in for the host compiler's _Float16.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <cstring>

namespace locus {

/// IEEE 754 binary16. Converts to and from float with round-to-nearest-even.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  /// Rounds `value` to the nearest representable half (ties to even); overflow gives inf.
  /* implicit */ Half(float value) noexcept : bits(from_float(value)) {}
  /// Exact widening to float.
  operator float() const noexcept { return to_float(bits); }

  static uint16_t from_float(float f) noexcept {
#if defined(__FLT16_MAX__) && !defined(__CUDACC__)
    _Float16 h = static_cast<_Float16>(f);
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
#else
    return from_float_soft(f);
#endif
  }
  static float to_float(uint16_t b) noexcept {
#if defined(__FLT16_MAX__) && !defined(__CUDACC__)
    _Float16 h;
    std::memcpy(&h, &b, 2);
    return static_cast<float>(h);
#else
    return to_float_soft(b);
#endif
  }
  /// Portable bit-level conversions, also used to test the hardware path.
  static uint16_t from_float_soft(float f) noexcept;
  static float to_float_soft(uint16_t b) noexcept;
};

/// bfloat16: the upper half of a float32. Converts with round-to-nearest-even; NaN stays NaN.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  /* implicit */ BFloat16(float value) noexcept : bits(from_float(value)) {}
  operator float() const noexcept { return to_float(bits); }

  static uint16_t from_float(float f) noexcept {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }
  static float to_float(uint16_t b) noexcept {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

}  // namespace locus

LOCUS_API_END
