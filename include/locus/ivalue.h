#pragma once
/// \file ivalue.h
/// IValue: one value of the few kinds a custom autograd Function stashes between its forward
/// and backward (AutogradContext::saved_data), with LibTorch's c10::IValue accessors.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "locus/tensor.h"

namespace locus {

/// A tagged value: none, bool, int, double, string, tensor, or a list of ints, doubles or
/// tensors. The to*() accessors return the value of their kind and throw a ValueError naming
/// both kinds otherwise (an int is not silently a double, as in LibTorch).
class IValue {
 public:
  /// None.
  IValue() = default;
  /// A bool.
  IValue(bool v) : value_(v) {}
  /// An int (any integer type).
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  IValue(I v) : value_(static_cast<int64_t>(v)) {}
  /// A double (or float).
  IValue(double v) : value_(v) {}
  /// A string.
  IValue(std::string v) : value_(std::move(v)) {}
  /// A string.
  IValue(const char* v) : value_(std::string(v)) {}
  /// A tensor.
  IValue(Tensor v) : value_(std::move(v)) {}
  /// A list of ints.
  IValue(std::vector<int64_t> v) : value_(std::move(v)) {}
  /// A list of doubles.
  IValue(std::vector<double> v) : value_(std::move(v)) {}
  /// A list of tensors.
  IValue(std::vector<Tensor> v) : value_(std::move(v)) {}

  /// Kind tests, as LibTorch's.
  bool isNone() const noexcept { return value_.index() == 0; }
  /// True for a bool.
  bool isBool() const noexcept { return std::holds_alternative<bool>(value_); }
  /// True for an int.
  bool isInt() const noexcept { return std::holds_alternative<int64_t>(value_); }
  /// True for a double.
  bool isDouble() const noexcept { return std::holds_alternative<double>(value_); }
  /// True for a string.
  bool isString() const noexcept { return std::holds_alternative<std::string>(value_); }
  /// True for a tensor.
  bool isTensor() const noexcept { return std::holds_alternative<Tensor>(value_); }
  /// True for a list of ints.
  bool isIntList() const noexcept { return std::holds_alternative<std::vector<int64_t>>(value_); }
  /// True for a list of doubles.
  bool isDoubleList() const noexcept { return std::holds_alternative<std::vector<double>>(value_); }
  /// True for a list of tensors.
  bool isTensorList() const noexcept { return std::holds_alternative<std::vector<Tensor>>(value_); }

  /// The value of each kind (ValueError for another kind).
  bool toBool() const { return get<bool>("Bool"); }
  /// The int.
  int64_t toInt() const { return get<int64_t>("Int"); }
  /// The double.
  double toDouble() const { return get<double>("Double"); }
  /// The string.
  const std::string& toStringRef() const { return get<std::string>("String"); }
  /// The tensor.
  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  /// The list of ints.
  const std::vector<int64_t>& toIntVector() const { return get<std::vector<int64_t>>("IntList"); }
  /// The list of doubles.
  const std::vector<double>& toDoubleVector() const { return get<std::vector<double>>("DoubleList"); }
  /// The list of tensors.
  const std::vector<Tensor>& toTensorVector() const { return get<std::vector<Tensor>>("TensorList"); }
  /// The kind's name, as LibTorch's tagKind(): "None", "Bool", "Int", "Double", ...
  std::string tagKind() const;

 private:
  template <class T>
  const T& get(const char* kind) const {
    if (const T* v = std::get_if<T>(&value_)) return *v;
    wrong_kind(kind);
  }
  [[noreturn]] void wrong_kind(const char* expected) const;

  std::variant<std::monostate, bool, int64_t, double, std::string, Tensor, std::vector<int64_t>, std::vector<double>,
               std::vector<Tensor>>
      value_;
};

}  // namespace locus

LOCUS_API_END
