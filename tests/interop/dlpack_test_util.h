#pragma once
// What the DLPack tests share: a producer written by hand (its memory, its struct and a count of
// its deleter's calls) and a wrapper that counts the calls of another producer's deleter.

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "locus/locus.h"
#include "tests/expect_error.h"

namespace locus::testing {

/// A DLPack producer over its own buffer: the struct it hands out points into `bytes`, and its
/// deleter counts itself. Outlives every struct it makes.
class Producer {
 public:
  alignas(64) unsigned char bytes[1024] = {};
  std::vector<int64_t> shape, strides;  ///< empty strides: a null strides pointer
  int deleter_calls = 0;

  /// Fills the buffer with float32 0, 1, 2, ...
  void fill_floats() {
    for (int i = 0; i < 256; ++i) {
      const float v = static_cast<float>(i);
      std::memcpy(bytes + 4 * i, &v, 4);
    }
  }

  /// A struct (DLManagedTensor or DLManagedTensorVersioned) over `bytes + data_offset`.
  template <class Managed>
  Managed* lend(DLDataType dtype, uint64_t byte_offset = 0, DLDevice device = {kDLCPU, 0}, size_t data_offset = 0,
                uint64_t flags = 0) {
    auto* m = new Managed{};
    DLTensor& dl = m->dl_tensor;
    dl.data = bytes + data_offset;
    dl.device = device;
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
    dl.byte_offset = byte_offset;
    m->manager_ctx = this;
    m->deleter = [](Managed* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleter_calls;
      delete self;
    };
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
      m->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
      m->flags = flags;
    }
    return m;
  }
};

/// Wraps another producer's struct (Locus's own export, say) in one whose deleter counts its
/// calls into `*calls` and then calls the original's deleter.
template <class Managed>
Managed* counting(Managed* inner, int* calls) {
  struct Wrapper {
    Managed managed;
    Managed* inner;
    int* calls;
  };
  auto* w = new Wrapper{*inner, inner, calls};
  w->managed.manager_ctx = w;
  w->managed.deleter = [](Managed* self) {
    auto* w = static_cast<Wrapper*>(self->manager_ctx);
    ++*w->calls;
    w->inner->deleter(w->inner);
    delete w;
  };
  return &w->managed;
}

/// 0, 1, 2, ... in `dtype` (0, 1, 0, 1, ... for bool), `n` elements on `device`.
inline Tensor counting_up(int64_t n, DType dtype, Device device = Device("cpu")) {
  Tensor t = arange(n, TensorOptions().device(device));
  if (dtype == kBool) t = t.remainder(2);
  return t.to(dtype);
}

/// Every Locus dtype with the DLPack code and bits it travels as.
struct DLPackDType {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};
inline const std::vector<DLPackDType>& dlpack_dtypes() {
  static const std::vector<DLPackDType> all{
      {kBool, kDLBool, 8},       {kUInt8, kDLUInt, 8},       {kInt8, kDLInt, 8},      {kInt16, kDLInt, 16},
      {kInt32, kDLInt, 32},      {kInt64, kDLInt, 64},       {kFloat16, kDLFloat, 16}, {kBFloat16, kDLBfloat, 16},
      {kFloat32, kDLFloat, 32},  {kFloat64, kDLFloat, 64},
  };
  return all;
}

}  // namespace locus::testing
