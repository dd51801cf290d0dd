#include "src/ops/kernel_registry.h"

#include <mutex>

namespace locus::ops {
namespace {

struct Registry {
  BackendKernels slots[kNumDeviceTypes];
  std::once_flag loaded[kNumDeviceTypes];
  Registry() { register_kernels(slots); }
};

Registry& registry() noexcept {
  static Registry r;
  return r;
}

}  // namespace

const BackendKernels& backend_kernels(DeviceType type) noexcept {
  Registry& r = registry();
  BackendKernels& slot = r.slots[static_cast<int>(type)];
  // Every reader of a module's slot passes through the once_flag, so the write is seen.
  if (slot.load) std::call_once(r.loaded[static_cast<int>(type)], [&] { slot.table = slot.load(); });
  return slot;
}

bool has_kernel(DeviceType type, OpId op, DType dtype) noexcept {
  const BackendKernels& b = backend_kernels(type);
  return b.table && b.table->has(op) && (!b.supports || b.supports(op, dtype));
}

}  // namespace locus::ops
