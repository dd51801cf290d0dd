#pragma once
// ProcessGroup over MPI, for programs that mpirun starts (Note [MPI process group] in the .cpp).

#include <chrono>
#include <memory>
#include <string>

#include "locus/distributed.h"

namespace locus::distributed {

/// A group of every process of the MPI job (MPI_COMM_WORLD, duplicated), its rank and size
/// MPI's; initialises MPI on first use. Every rank must make its mpi groups in the same order.
/// A collective, group creation included, that waits longer than `timeout` ends the job
/// (MPI_Abort) after printing the DistributedError that says which one and where.
std::shared_ptr<ProcessGroup> make_mpi_group(std::chrono::milliseconds timeout, const std::string& name);

}  // namespace locus::distributed
