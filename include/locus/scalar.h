#pragma once
/// \file scalar.h
/// A number passed where a tensor could go (`x + 2.5`, `full(shape, 7)`).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "locus/dtype.h"

namespace locus {

/// A bool, integer or floating number. Its kind matters for type promotion, exactly as a
/// Python number does in PyTorch: `int_tensor + 2.5` is float32, `int_tensor + 2` stays int.
class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float };

  Scalar() : kind_(Kind::Int), i_(0) {}
  /* implicit */ Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  /* implicit */ Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  /* implicit */ Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}
  /* implicit */ Scalar(Half v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}
  /* implicit */ Scalar(BFloat16 v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}

  Kind kind() const noexcept { return kind_; }
  bool is_floating_point() const noexcept { return kind_ == Kind::Float; }
  bool is_integral() const noexcept { return kind_ == Kind::Int; }
  bool is_bool() const noexcept { return kind_ == Kind::Bool; }

  /// The value as double (exact for floats; integers beyond 2^53 round).
  double to_double() const noexcept { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  /// The value as int64 (floats truncate toward zero).
  int64_t to_int64() const noexcept { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  /// LibTorch's names for the conversions: `x.item().toFloat()`.
  float toFloat() const noexcept { return to<float>(); }
  /// As toFloat, to double.
  double toDouble() const noexcept { return to_double(); }
  /// As toFloat, to int (floats truncate toward zero).
  int toInt() const noexcept { return to<int>(); }
  /// As toFloat, to int64.
  int64_t toLong() const noexcept { return to_int64(); }
  /// As toFloat, to bool.
  bool toBool() const noexcept { return to<bool>(); }
  /// The value converted to `T`, with Locus's float16/bfloat16 rounding.
  template <class T>
  T to() const noexcept {
    if constexpr (std::is_same_v<T, bool>) return kind_ == Kind::Float ? d_ != 0.0 : i_ != 0;
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(to_int64());
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(to_double()));
    else return static_cast<T>(to_double());
  }
  /// Converts to any C++ number type, so `float loss = t.item();` reads as in Python.
  template <class T>
    requires(std::is_arithmetic_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
  /* implicit */ operator T() const noexcept {
    return to<T>();
  }

  /// The dtype this number has on its own: bool, int64 or the default dtype (float32 unless
  /// set_default_dtype changed it).
  DType natural_dtype() const noexcept {
    return kind_ == Kind::Bool ? DType::Bool : kind_ == Kind::Int ? DType::Int64 : get_default_dtype();
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

/// Prints the number as PyTorch would print a Python number.
std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace locus

LOCUS_API_END
