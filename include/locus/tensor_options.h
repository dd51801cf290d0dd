#pragma once
/// \file tensor_options.h
/// TensorOptions: the dtype / device / requires_grad / pinned / memory-format settings of a
/// factory call.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>

#include "locus/device.h"
#include "locus/dtype.h"
#include "locus/memory_format.h"

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
  /// The new tensor's layout (`empty(shape, TensorOptions().memory_format(
  /// MemoryFormat::ChannelsLast))`); unset: contiguous, or for the *_like factories the layout
  /// of the tensor they copy (Preserve, PyTorch's default there).
  TensorOptions memory_format(std::optional<MemoryFormat> f) const { auto o = *this; o.memory_format_ = f; return o; }

  std::optional<DType> dtype_opt() const { return dtype_; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  Device device() const { return device_; }
  bool requires_grad() const { return requires_grad_; }
  bool pinned_memory() const { return pinned_; }
  /// The layout asked for, if any.
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }

 private:
  std::optional<DType> dtype_;
  Device device_{DeviceType::CPU, -1};
  bool requires_grad_ = false;
  bool pinned_ = false;
  std::optional<MemoryFormat> memory_format_;
};

/// LibTorch's torch::dtype(t): options with that dtype, to chain on
/// (`zeros({2}, dtype(kFloat64).requires_grad(true))`).
inline TensorOptions dtype(DType t) { return TensorOptions().dtype(t); }
/// LibTorch's torch::device(d): options with that device.
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
/// LibTorch's torch::requires_grad(r): options whose tensors require grad.
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
/// LibTorch's torch::memory_format(f): options with that layout.
inline TensorOptions memory_format(MemoryFormat f) { return TensorOptions().memory_format(f); }

}  // namespace locus

LOCUS_API_END
