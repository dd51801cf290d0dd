#pragma once
// Expectations every engine's group must meet (Gloo's ranks as threads in collectives_test.cpp,
// MPI's as processes in mpi_test.cpp): the values of one collective kind over every op and
// dtype, computed here from what each rank held.

#include "locus/distributed.h"

namespace locus::testing {

/// All-reduce on every rank of `g`: Sum, Max, Min and Product over every dtype, Avg over the
/// floating ones, float16's rounding, booleans, wrapping integers and NaN.
void expect_all_reduce_every_op_and_dtype(distributed::ProcessGroup& g);

}  // namespace locus::testing
