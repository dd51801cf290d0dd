#pragma once
/// \file tensor_accessor.h
/// TensorAccessor<T, N>: LibTorch's `t.accessor<float, 2>()`, indexed access to a CPU tensor's
/// elements through its strides: `auto a = t.accessor<float, 2>(); a[i][j] = 1;`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <cstdint>

namespace locus {

/// Element access to the first dims of a strided CPU buffer; `operator[]` on the last dim gives
/// the element. Holds pointers into its tensor's sizes and strides, so it must not outlive the
/// tensor (Tensor::accessor is refused on a temporary, as in LibTorch). No bounds checks.
template <class T, size_t N>
class TensorAccessor {
 public:
  /// Over `data` with N sizes and strides (in elements).
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides) noexcept
      : data_(data), sizes_(sizes), strides_(strides) {}
  /// Entry `i` of the first dim: an accessor of the remaining dims, or the element itself.
  decltype(auto) operator[](int64_t i) const noexcept {
    if constexpr (N == 1) {
      return static_cast<T&>(data_[i * strides_[0]]);
    } else {
      return TensorAccessor<T, N - 1>(data_ + i * strides_[0], sizes_ + 1, strides_ + 1);
    }
  }
  /// The size of dim `d` (of this accessor's dims).
  int64_t size(int64_t d) const noexcept { return sizes_[d]; }
  /// The stride of dim `d`, in elements.
  int64_t stride(int64_t d) const noexcept { return strides_[d]; }
  /// The first element.
  T* data() const noexcept { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

}  // namespace locus

LOCUS_API_END
