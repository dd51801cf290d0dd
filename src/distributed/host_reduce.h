#pragma once
// The reduce functions the host engines (Gloo, MPI) call on host buffers, one per (dtype, op):
// they move bytes in elements of the dtype's size and leave the arithmetic to us, so float16,
// bfloat16 and bool reduce as Locus's kernels do, and the same on every engine.

#include <cstddef>
#include <functional>

#include "locus/distributed.h"
#include "locus/dtype.h"
#include "locus/export.h"

// Exported for the mpi module (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// c[i] = a[i] (op) b[i] for n elements of `dtype`; Avg reduces as Sum (the caller divides). c may be a or b.
using HostReduce = std::function<void(void* c, const void* a, const void* b, size_t n)>;

/// The function for `dtype` and `op`.
HostReduce host_reduce(DType dtype, ReduceOp op);

}  // namespace locus::distributed

LOCUS_API_END
