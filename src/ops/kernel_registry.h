#pragma once
// Which kernels each device type has: filled once from the one registration file
// (src/backends/register_backends.cpp), read on every op without a lock (a module's table
// behind a std::call_once).

#include "locus/device.h"
#include "locus/dtype.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {

/// The kernels one device type provides.
struct BackendKernels {
  const KernelTable* table = nullptr;
  /// False where the backend lacks `op` for `dtype` (a sim device told to lack it, SPEC section
  /// 6); null when every kernel of the table is there. Must not lock: it runs on every op.
  bool (*supports)(OpId op, DType dtype) noexcept = nullptr;
  /// Loads `table` the first time the type is asked for (a backend module, Note [Backend
  /// modules]); null for kernels linked in. A failed load leaves the entry empty.
  const KernelTable* (*load)() noexcept = nullptr;
};

/// The kernels of `type`; an empty entry when this build has none.
const BackendKernels& backend_kernels(DeviceType type) noexcept;
/// True when `type` has a kernel for `op` on `dtype`.
bool has_kernel(DeviceType type, OpId op, DType dtype) noexcept;

/// Fills the slots; defined in src/backends/register_backends.cpp, the one place that knows
/// which backends this build has.
void register_kernels(BackendKernels slots[kNumDeviceTypes]);

}  // namespace locus::ops
