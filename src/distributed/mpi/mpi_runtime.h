#pragma once
// MPI itself, once per process: initialised by the first mpi process group, finalized at a
// clean exit, and one lock that every MPI call of Locus's is made under (Note [MPI runtime] in
// mpi_runtime.cpp).

#include <mpi.h>

#include <mutex>
#include <string>

namespace locus::distributed {

/// The lock every MPI call of Locus's is made under: MPI is initialised with
/// MPI_THREAD_SERIALIZED, which lets any thread call it, but one at a time. Held for one call
/// (or a few), never while waiting for other ranks.
std::unique_lock<std::timed_mutex> lock_mpi();

/// Marks one collective (or a group being made) as in flight while it lives: MPI is not finalized
/// at exit under it. Make it with lock_mpi() held, after mpi_finalized() said false.
class MpiInFlight {
 public:
  MpiInFlight();
  ~MpiInFlight();
  MpiInFlight(const MpiInFlight&) = delete;
  MpiInFlight& operator=(const MpiInFlight&) = delete;
};

/// Initialises MPI unless the program already has (MPI_Init_thread with MPI_THREAD_SERIALIZED),
/// and arranges its finalization at a clean exit. Call with lock_mpi() held. DistributedError
/// when MPI was already finalized, or gives less thread support than Locus needs.
void ensure_mpi_initialized();

/// Whether MPI has been finalized (at exit, or by the program). Call with lock_mpi() held.
bool mpi_finalized();

/// MPI's description of error code `code` ("MPI_ERR_TRUNCATE: message truncated").
std::string mpi_error_text(int code);

}  // namespace locus::distributed
