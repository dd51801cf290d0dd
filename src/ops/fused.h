#pragma once
// Finding a fused kernel. See Note [Fused kernels].

#include <initializer_list>

#include "locus/device.h"
#include "src/ops/kernel_registry.h"

// Note [Fused kernels]
// The training step's hot ops have one-pass kernels beside the general ones: Linear's product
// with its bias and activation (KernelTable::linear, linear_grad), the optimizers' update of
// every parameter (optimizer_step) and cross_entropy with class targets (cross_entropy,
// cross_entropy_grad). They are optional entries: where a device type has none (or a sim
// device is configured to lack one of the ops they stand for), the front end composes the
// same result from the general kernels, so a missing fused kernel costs passes, never the CPU
// fallback. The values are the composed path's: tests run both and compare.

namespace locus::ops {

/// `device`'s kernel table when the fused entry `entry` is there and the device supports each
/// op it stands for in `dtype`; null when the front end must compose instead.
template <class Entry>
const KernelTable* fused_kernels(Entry KernelTable::*entry, Device device, DType dtype,
                                 std::initializer_list<OpId> stands_for) noexcept {
  const BackendKernels& b = backend_kernels(device.type());
  if (!b.table || !(b.table->*entry)) return nullptr;
  if (b.supports)
    for (OpId op : stands_for)
      if (!b.supports(op, dtype)) return nullptr;
  return b.table;
}

}  // namespace locus::ops
