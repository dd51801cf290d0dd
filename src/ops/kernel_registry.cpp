#include "src/ops/kernel_registry.h"

namespace locus::ops {
namespace {

struct Registry {
  BackendKernels slots[kNumDeviceTypes];
  Registry() { register_kernels(slots); }
};

const Registry& registry() noexcept {
  static const Registry r;
  return r;
}

}  // namespace

const BackendKernels& backend_kernels(DeviceType type) noexcept { return registry().slots[static_cast<int>(type)]; }

bool has_kernel(DeviceType type, OpId op, DType dtype) noexcept {
  const BackendKernels& b = backend_kernels(type);
  return b.table && b.table->has(op) && (!b.supports || b.supports(op, dtype));
}

}  // namespace locus::ops
