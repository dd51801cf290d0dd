#pragma once
// What every op front end does around its kernel: find the one device of its operands, then
// the kernels for it (or learn that the CPU fallback must run the op), and make its output.
// See Note [Op path] in src/ops/elementwise_call.cpp.

#include <initializer_list>
#include <string_view>
#include <utility>

#include "locus/ops.h"
#include "locus/tensor.h"
#include "src/ops/kernel_registry.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {

/// A tensor operand with the argument name used in error messages ("self", "other").
struct Operand {
  const Tensor& tensor;
  const char* name;
};

/// The device all defined operands share. A 0-dim CPU tensor may join an op on another device (as a
/// scalar). Otherwise DeviceMismatchError naming both devices, the argument and `op`.
Device common_device(OpId op, std::initializer_list<Operand> operands);
Device common_device(OpId op, const Operand* operands, int count);
/// Same, for a list of tensors named "tensors[i]" (cat, stack).
Device common_device(OpId op, const std::vector<Tensor>& tensors);

/// The kernels that run `op` for `dtype` on `device`, or null when the CPU fallback must run
/// it instead (policy warn/silent; counted, warned once). NotImplementedError when the policy
/// is error, naming the device types that have the kernel.
const KernelTable* kernels_for(OpId op, Device device, DType dtype);
/// The elementwise kernel of `op` on `device`, as kernels_for decides; inline for the common
/// case of a backend that has every kernel of its table.
inline ElementwiseKernel elementwise_kernel(OpId op, Device device, DType dtype) {
  const BackendKernels& b = backend_kernels(device.type());
  if (b.table && !b.supports)
    if (ElementwiseKernel k = b.table->elementwise[static_cast<int>(op)]) return k;
  const KernelTable* t = kernels_for(op, device, dtype);
  return t ? t->elementwise[static_cast<int>(op)] : nullptr;
}

/// What run_on_cpu does to an operand: tensors move to the CPU (undefined ones stay), anything
/// else passes through.
inline Tensor to_cpu(const Tensor& t) { return t.defined() ? t.cpu() : t; }
template <class T>
const T& to_cpu(const T& value) { return value; }
Tensor back_to(Device device, Tensor result);
ValuesIndices back_to(Device device, ValuesIndices result);

/// The CPU fallback, the one place it happens (SPEC section 6): calls `run` with each operand
/// moved to the CPU and brings the result (a Tensor or ValuesIndices) back to `device`.
template <class Run, class... Operands>
auto run_on_cpu(Device device, Run&& run, const Operands&... operands) {
  auto result = run(to_cpu(operands)...);
  return back_to(device, std::move(result));
}

/// A new contiguous tensor on a resolved `device`, allocated for the thread's current stream
/// there; `pinned` takes page-locked host memory (device must be cpu, else ValueError).
Tensor empty_on(const Shape& shape, DType dtype, Device device, bool pinned = false);
/// The same laid out in `format` (Contiguous or the channels-last one of shape's rank).
Tensor empty_on(const Shape& shape, DType dtype, Device device, MemoryFormat format, bool pinned = false);

/// Waits for pending asynchronous device work on `t` before the host touches it.
inline void wait_for_host(const Tensor& t) { t.impl()->storage()->wait_for_pending_work(); }

/// Wraps a dim index into [0, ndim) ("dim" errors name the op). IndexError when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, OpId op);

}  // namespace locus::ops
