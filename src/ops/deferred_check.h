#pragma once
// Checks of values that live on the device (class targets, indices) without waiting for it.
// See Note [Deferred checks] in deferred_check.cpp.

#include <optional>

#include "locus/tensor.h"
#include "src/ops/kernel_table.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::ops {

/// Raises IndexError (of `kind`, naming `op` and `bound`) for a value of `values` (int64) outside
/// [0, bound) other than `ignore`. On devices the host reads directly it checks now and returns
/// how many values are not `ignore`; on the others (cuda) one kernel checks, the host raises at
/// its next synchronization with the device, and the count is not known (nullopt).
std::optional<int64_t> check_range(OpId op, CheckKind kind, const Tensor& values, int64_t bound,
                                   std::optional<int64_t> ignore = std::nullopt);

/// The IndexError of a failed check; `deferred` says it was found by an earlier operation.
[[noreturn]] void raise_failed_check(OpId op, CheckKind kind, int64_t value, int64_t bound, Device device, bool deferred);

}  // namespace locus::ops

LOCUS_API_END
