#pragma once
// Checks of values that live on the device (class targets, indices) without waiting for it.
// See Note [Deferred checks] in deferred_check.cpp.

#include <functional>

#include "locus/tensor.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {

/// Raises IndexError (of `kind`, naming `op` and `bound`) when `bad_count`, a 0-dim int64
/// tensor, is not zero. On devices the host reads directly it checks now and `first_bad` (the
/// offending value, a 0-dim int64 tensor) is only computed on failure; on the others (cuda) the
/// device records the failure and the host raises at its next synchronization with it.
void check_on_device(OpId op, CheckKind kind, int64_t bound, const Tensor& bad_count,
                     const std::function<Tensor()>& first_bad);

/// The IndexError of a failed check; `deferred` says it was found by an earlier operation.
[[noreturn]] void raise_failed_check(OpId op, CheckKind kind, int64_t value, int64_t bound, Device device, bool deferred);

}  // namespace locus::ops
