#pragma once
// What every op front end does first: find the one device of its operands, then the kernels
// for it (or the CPU fallback), and make its output.

#include <initializer_list>
#include <string_view>

#include "locus/tensor.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {

/// A tensor operand with the argument name used in error messages ("self", "other").
struct Operand {
  const Tensor& tensor;
  const char* name;
};

/// The device all operands share. A 0-dim CPU tensor may join an op on another device (as a
/// scalar). Otherwise DeviceMismatchError naming both devices, the argument and `op`.
Device common_device(OpId op, std::initializer_list<Operand> operands);
/// Same, for a list of tensors named "tensors[i]" (cat, stack).
Device common_device(OpId op, const std::vector<Tensor>& tensors);

/// The kernels that run `op` for `dtype` on `device`, or null when the CPU fallback must run
/// it instead (policy warn/silent; counted). NotImplementedError when the policy is error.
const KernelTable* kernels_for(OpId op, Device device, DType dtype);

/// A new contiguous tensor on a resolved `device`, allocated for the thread's current stream
/// there; `pinned` takes page-locked host memory (device must be cpu, else ValueError).
Tensor empty_on(const Shape& shape, DType dtype, Device device, bool pinned = false);

/// Waits for pending asynchronous device work on `t` before the host touches it.
inline void wait_for_host(const Tensor& t) { t.impl()->storage()->wait_for_pending_work(); }

/// Wraps a dim index into [0, ndim) ("dim" errors name the op). IndexError when out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, OpId op);

}  // namespace locus::ops
