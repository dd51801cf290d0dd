#pragma once
// How MPI sees Locus's elements and reductions: an element is bytes of its dtype's size, and a
// reduction is host_reduce's loop for the dtype, so every dtype reduces on MPI as on Gloo
// (float16 and bfloat16 in float, bool sums as `or`, integers wrapping).

#include <mpi.h>

#include "locus/distributed.h"
#include "locus/dtype.h"

namespace locus::distributed {

/// The datatype of one element of `dtype`: contiguous bytes of its size, which MPI moves without
/// looking inside. MPI must be initialised; the first call (an mpi group's constructor makes it)
/// needs lock_mpi() held, later ones need nothing.
MPI_Datatype mpi_element_type(DType dtype);

/// The operation that combines elements of mpi_element_type(dtype), for any dtype, as
/// host_reduce does (Avg as Sum: the caller divides). The same conditions as mpi_element_type.
MPI_Op mpi_reduce_op(ReduceOp op);

}  // namespace locus::distributed
