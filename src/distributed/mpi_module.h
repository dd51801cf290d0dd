#pragma once
// What the MPI module hands the core (Note [Backend modules]): the factory of its process group.

#include <chrono>
#include <memory>
#include <string>

#include "locus/distributed.h"

namespace locus::distributed {

/// Joins the mpi group of every process of the MPI job, initialising MPI on first use
/// (src/distributed/mpi/mpi_process_group.h).
using MpiGroupFactory = std::shared_ptr<ProcessGroup> (*)(std::chrono::milliseconds timeout, const std::string& name);

}  // namespace locus::distributed
