#pragma once
// MPI itself, once per process: initialised by the first mpi process group, finalized at a
// clean exit, and one lock that every MPI call of Locus's is made under (Note [MPI runtime] in
// mpi_runtime.cpp).

#include <mpi.h>

#include <mutex>
#include <string>

namespace locus::distributed {

/// The lock every MPI call of Locus's is made under: MPI is initialised with
/// MPI_THREAD_SERIALIZED, which lets any thread call it, but one at a time.
std::unique_lock<std::timed_mutex> lock_mpi();

/// Initialises MPI unless the program already has (MPI_Init_thread with MPI_THREAD_SERIALIZED),
/// and arranges its finalization at a clean exit. Call with lock_mpi() held. DistributedError
/// when MPI was already finalized, or gives less thread support than Locus needs.
void ensure_mpi_initialized();

/// Whether MPI has been finalized (at exit, or by the program). Call with lock_mpi() held.
bool mpi_finalized();

/// MPI's description of error code `code` ("MPI_ERR_TRUNCATE: message truncated").
std::string mpi_error_text(int code);

}  // namespace locus::distributed
