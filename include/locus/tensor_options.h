#pragma once
/// \file tensor_options.h
/// TensorOptions: the dtype / device / requires_grad / pinned settings of a factory call.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>

#include "locus/device.h"
#include "locus/dtype.h"

namespace locus {

/// Builder for factory settings: `TensorOptions().dtype(kFloat64).device("sim:0")`.
/// Unset fields take the factory's default (float32 or the values' type, cpu, no grad).
class TensorOptions {
 public:
  TensorOptions() = default;
  /* implicit */ TensorOptions(Device d) : device_(d) {}
  /* implicit */ TensorOptions(const char* d) : device_(Device(d)) {}
  /* implicit */ TensorOptions(DType t) : dtype_(t) {}

  TensorOptions dtype(DType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  /// Page-locked host memory (CPU tensors only; what makes host-to-CUDA copies asynchronous).
  TensorOptions pinned_memory(bool p) const { auto o = *this; o.pinned_ = p; return o; }

  std::optional<DType> dtype_opt() const { return dtype_; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }
  bool pinned_memory() const { return pinned_; }

 private:
  std::optional<DType> dtype_;
  Device device_{DeviceType::CPU, -1};
  bool requires_grad_ = false;
  bool pinned_ = false;
};

/// LibTorch's torch::dtype(t): options with that dtype, to chain on
/// (`zeros({2}, dtype(kFloat64).requires_grad(true))`).
inline TensorOptions dtype(DType t) { return TensorOptions().dtype(t); }
/// LibTorch's torch::device(d): options with that device.
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
/// LibTorch's torch::requires_grad(r): options whose tensors require grad.
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

}  // namespace locus

LOCUS_API_END
