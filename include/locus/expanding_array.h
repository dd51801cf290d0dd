#pragma once
/// \file expanding_array.h
/// ExpandingArray<D>: D sizes given as one number for all dims or one per dim, as LibTorch's
/// torch::ExpandingArray (kernel sizes, strides, paddings: `kernel_size(3)` or `kernel_size({3, 5})`).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "locus/errors.h"

namespace locus {

/// D integers, one per spatial dim: from a single number (repeated) or from exactly D numbers.
template <size_t D>
class ExpandingArray {
 public:
  /// Every dim `value`.
  ExpandingArray(int64_t value) { values_.fill(value); }
  /// One number per dim; ValueError unless there are exactly D.
  ExpandingArray(std::initializer_list<int64_t> values) : ExpandingArray(std::vector<int64_t>(values)) {}
  /// One number per dim; ValueError unless there are exactly D.
  ExpandingArray(const std::vector<int64_t>& values) {
    if (values.size() != D)
      throw ValueError("expected " + std::to_string(D) + " values (one per spatial dim), got " +
                       std::to_string(values.size()));
    for (size_t i = 0; i < D; ++i) values_[i] = values[i];
  }
  /// The value of dim `i`.
  int64_t operator[](size_t i) const noexcept { return values_[i]; }
  /// The value of dim `i`, writable.
  int64_t& operator[](size_t i) noexcept { return values_[i]; }
  /// D.
  static constexpr size_t size() noexcept { return D; }
  /// The values as a vector (what the N-d implementations take).
  std::vector<int64_t> vec() const { return {values_.begin(), values_.end()}; }
  /// Equal when every dim is.
  bool operator==(const ExpandingArray&) const = default;

 private:
  std::array<int64_t, D> values_{};
};

}  // namespace locus

LOCUS_API_END
