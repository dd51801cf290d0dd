#include "locus/dtype.h"

#include <atomic>
#include <ostream>
#include <string>

#include "locus/errors.h"

namespace locus {

namespace {
std::atomic<DType> g_default_dtype{kDefaultFloat};
}  // namespace

DType get_default_dtype() noexcept { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(DType dtype) {
  if (!is_floating_point(dtype))
    throw DTypeError("set_default_dtype: only floating-point types are supported as the default type, got " +
                     std::string(dtype_name(dtype)));
  g_default_dtype.store(dtype, std::memory_order_relaxed);
}

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

DType promote_types(DType a, DType b) noexcept {
  // PyTorch's table (order: b1 u1 i1 i2 i4 i8 f2 bf f4 f8).
  constexpr DType b1 = DType::Bool, u1 = DType::UInt8, i1 = DType::Int8, i2 = DType::Int16, i4 = DType::Int32,
                  i8 = DType::Int64, f2 = DType::Float16, bf = DType::BFloat16, f4 = DType::Float32, f8 = DType::Float64;
  static constexpr DType table[kNumDTypes][kNumDTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

uint16_t Half::from_float_soft(float f) noexcept {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (abs < 0x38800000u) {                                                // subnormal or zero
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t shift = 126 - (abs >> 23);
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    uint32_t h = mant >> shift;  // units of 2^-24, the half subnormal step
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float Half::to_float_soft(uint16_t b) noexcept {
  const uint32_t sign = static_cast<uint32_t>(b & 0x8000u) << 16;
  uint32_t exp = (b >> 10) & 0x1fu, mant = b & 0x3ffu, x;
  if (exp == 0) {
    if (mant == 0) x = sign;
    else {
      exp = 113;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

}  // namespace locus
