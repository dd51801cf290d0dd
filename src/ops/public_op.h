#pragma once
// ops::PublicOp: how a composite public function starts (Note [Public op names] in
// src/core/public_op.h): it names itself for every error raised inside it, and checks the
// device rule over its own arguments, under the names the user knows, before any inner op runs.

#include <initializer_list>

#include "src/core/public_op.h"
#include "src/ops/dispatch.h"

namespace locus::ops {

/// Whether a 0-dim CPU tensor argument may join a function running on another device, as a
/// number does. Elementwise-like functions (mse_loss) let it, as PyTorch's TensorIterator does;
/// the others (losses over classes, linear, mm) refuse it, as PyTorch's device check does.
enum class CpuScalars { Join, Refuse };

/// Opens a detail::PublicOpScope named `name`, then finds the one device of `arguments`
/// (undefined tensors, such as a missing bias, are skipped): DeviceMismatchError naming both
/// devices, the argument and the public name otherwise. Lives for the whole function.
class PublicOp {
 public:
  PublicOp(const char* name, std::initializer_list<Operand> arguments, CpuScalars cpu_scalars = CpuScalars::Refuse);
  PublicOp(const PublicOp&) = delete;
  PublicOp& operator=(const PublicOp&) = delete;
  /// The device every argument is on (cpu when none is defined).
  Device device() const noexcept { return device_; }

 private:
  detail::PublicOpScope scope_;  // first: still closed when the device check throws
  Device device_;
};

}  // namespace locus::ops
