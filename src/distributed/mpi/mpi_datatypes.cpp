// mpi_datatypes: one contiguous datatype per dtype and one user-defined MPI_Op per reduction,
// made once, after MPI_Init (MPI_Finalize frees them). MPI calls an op's function with the
// datatype of the call, which names the dtype, and the function runs host_reduce's loop for it.

#include "src/distributed/mpi/mpi_datatypes.h"

#include <atomic>
#include <cstdio>

#include "src/distributed/host_reduce.h"

namespace locus::distributed {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Product};
constexpr int kNumOps = 4;

int op_index(ReduceOp op) {
  switch (op) {
    case ReduceOp::Min: return 1;
    case ReduceOp::Max: return 2;
    case ReduceOp::Product: return 3;
    default: return 0;  // Sum, and Avg, which divides afterwards
  }
}

struct Tables {
  MPI_Datatype types[kNumDTypes] = {};
  HostReduce reduce[kNumDTypes][kNumOps];
  MPI_Op ops[kNumOps] = {};
};
// Made under lock_mpi() by the first group, read by its collectives; never freed (MPI's handles
// die with MPI).
std::atomic<Tables*> g_tables{nullptr};

// MPI's signature for a user-defined reduction: inout[i] = in[i] (op) inout[i].
template <int Op>
void combine(void* in, void* inout, int* len, MPI_Datatype* type) {
  const Tables& t = *g_tables.load(std::memory_order_acquire);
  for (int d = 0; d < kNumDTypes; ++d)
    if (t.types[d] == *type) {
      t.reduce[d][Op](inout, in, inout, static_cast<size_t>(*len));
      return;
    }
  // Only Locus's calls reach this function, each with one of the datatypes above.
  std::fprintf(stderr, "[locus] an MPI reduction was handed a datatype Locus did not make; ending the job\n");
  MPI_Abort(MPI_COMM_WORLD, 1);
}

const Tables& tables() {
  if (const Tables* made = g_tables.load(std::memory_order_acquire)) return *made;
  auto* t = new Tables;
  for (int d = 0; d < kNumDTypes; ++d) {
    const DType dtype = static_cast<DType>(d);
    MPI_Type_contiguous(static_cast<int>(itemsize(dtype)), MPI_BYTE, &t->types[d]);
    MPI_Type_commit(&t->types[d]);
    for (int o = 0; o < kNumOps; ++o) t->reduce[d][o] = host_reduce(dtype, kOps[o]);
  }
  MPI_Op_create(&combine<0>, /*commute=*/1, &t->ops[0]);
  MPI_Op_create(&combine<1>, 1, &t->ops[1]);
  MPI_Op_create(&combine<2>, 1, &t->ops[2]);
  MPI_Op_create(&combine<3>, 1, &t->ops[3]);
  g_tables.store(t, std::memory_order_release);
  return *t;
}

}  // namespace

MPI_Datatype mpi_element_type(DType dtype) { return tables().types[static_cast<int>(dtype)]; }

MPI_Op mpi_reduce_op(ReduceOp op) { return tables().ops[op_index(op)]; }

}  // namespace locus::distributed
