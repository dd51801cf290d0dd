#pragma once
/// \file dtype.h
/// Element types and PyTorch's type-promotion rules.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include "locus/half.h"

namespace locus {

/// The nine element types. Order matters only inside the promotion table.
enum class DType : int8_t {
  Bool = 0,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
};

/// Number of dtypes; sizes per-dtype tables.
inline constexpr int kNumDTypes = 10;

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt8 = DType::Int8;
inline constexpr DType kInt16 = DType::Int16;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;

// LibTorch's names for the same dtypes, for code and habits carried over from it.
inline constexpr DType kByte = DType::UInt8;    ///< LibTorch's kByte: uint8
inline constexpr DType kChar = DType::Int8;     ///< LibTorch's kChar: int8
inline constexpr DType kShort = DType::Int16;   ///< LibTorch's kShort: int16
inline constexpr DType kInt = DType::Int32;     ///< LibTorch's kInt: int32
inline constexpr DType kLong = DType::Int64;    ///< LibTorch's kLong: int64
inline constexpr DType kHalf = DType::Float16;  ///< LibTorch's kHalf: float16
inline constexpr DType kFloat = DType::Float32;  ///< LibTorch's kFloat: float32
inline constexpr DType kDouble = DType::Float64;  ///< LibTorch's kDouble: float64
inline constexpr DType kU8 = DType::UInt8;       ///< LibTorch's kU8: uint8
inline constexpr DType kI8 = DType::Int8;        ///< LibTorch's kI8: int8
inline constexpr DType kI16 = DType::Int16;      ///< LibTorch's kI16: int16
inline constexpr DType kI32 = DType::Int32;      ///< LibTorch's kI32: int32
inline constexpr DType kI64 = DType::Int64;      ///< LibTorch's kI64: int64
inline constexpr DType kF16 = DType::Float16;    ///< LibTorch's kF16: float16
inline constexpr DType kF32 = DType::Float32;    ///< LibTorch's kF32: float32
inline constexpr DType kF64 = DType::Float64;    ///< LibTorch's kF64: float64

/// Bytes per element.
constexpr size_t itemsize(DType t) noexcept {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
    case DType::Int8: return 1;
    case DType::Int16:
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int32:
    case DType::Float32: return 4;
    case DType::Int64:
    case DType::Float64: return 8;
  }
  return 0;
}

/// float16, bfloat16, float32, float64.
constexpr bool is_floating_point(DType t) noexcept {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
/// uint8, int8, int16, int32, int64 (not bool).
constexpr bool is_integral(DType t) noexcept {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

/// "float32", "int64", "bool", ...
std::string_view dtype_name(DType t) noexcept;

/// PyTorch's promote_types for two dtypes.
DType promote_types(DType a, DType b) noexcept;

/// The default dtype at start (float32, as in PyTorch); get_default_dtype() is the current one.
inline constexpr DType kDefaultFloat = DType::Float32;

/// The dtype of floating literals (`tensor({1.0, 2.0})`, `tensor(3.5)`), floating factories
/// (`zeros`, `randn`, `arange(0, 1, 0.5)`), true division of integers and a Python float
/// scalar with an integer tensor: torch.get_default_dtype(). Process-wide.
DType get_default_dtype() noexcept;
/// Sets it, as torch.set_default_dtype; DTypeError for a dtype that is not floating.
void set_default_dtype(DType dtype);

/// Prints dtype_name(t).
std::ostream& operator<<(std::ostream& os, DType t);

/// Maps a C++ element type to its DType (`dtype_of<float>() == kFloat32`).
template <class T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<Half>() { return DType::Float16; }
template <> constexpr DType dtype_of<BFloat16>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

}  // namespace locus

LOCUS_API_END
