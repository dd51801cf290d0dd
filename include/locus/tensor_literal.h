#pragma once
/// \file tensor_literal.h
/// The argument of `tensor(...)`: a number or a nested braced list of numbers of any depth,
/// as Python's torch.tensor takes (`tensor({{1.f, 2.f}, {3.f, 4.f}})`).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "locus/scalar.h"
#include "locus/shape.h"

namespace locus {

/// A number or a list of TensorLiterals. The dtype it asks for follows its numbers as a
/// Python literal's does: any `double` -> the default dtype (get_default_dtype(), float32 at
/// start), else any `float` -> float32, else any integer -> int64, else bool.
class TensorLiteral {
 public:
  /// One number: a 0-dim tensor, or an element of an enclosing list.
  template <class T>
    requires std::is_arithmetic_v<T>
  /* implicit */ TensorLiteral(T value) : leaf_(value), kind_(kind_of<T>()), is_leaf_(true) {}
  /// A list: a dimension.
  /* implicit */ TensorLiteral(std::initializer_list<TensorLiteral> items) : items_(items) {}

  /// The shape of the literal; ValueError (as PyTorch's) for ragged lists or a list mixing
  /// numbers and lists.
  Shape shape() const;
  /// The numbers in row-major order.
  std::vector<Scalar> flatten() const;
  /// The dtype the numbers ask for (see the class comment); the default dtype for an empty list.
  DType natural_dtype() const;

 private:
  // Ordered by promotion: a literal's kind is the largest of its numbers'.
  enum class Kind : int8_t { None, Bool, Int, Float32, Double };
  template <class T>
  static constexpr Kind kind_of() {
    if constexpr (std::is_same_v<T, bool>) return Kind::Bool;
    else if constexpr (std::is_integral_v<T>) return Kind::Int;
    else if constexpr (std::is_same_v<T, float>) return Kind::Float32;
    else return Kind::Double;
  }
  Kind kind() const;
  void collect(std::vector<Scalar>& out) const;

  Scalar leaf_;
  Kind kind_ = Kind::None;
  bool is_leaf_ = false;
  std::vector<TensorLiteral> items_;
};

}  // namespace locus

LOCUS_API_END
