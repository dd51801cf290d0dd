// Note [MPI runtime]
// MPI is initialised by the first mpi process group, not when Locus loads: a program that never
// asks for one never starts MPI (outside mpirun, Open MPI's singleton start takes half a second
// and a helper daemon). Locus asks for MPI_THREAD_SERIALIZED: its collectives run on a group's
// worker thread or on the thread that waits for them (Note [Collective queue]), so several
// threads call MPI, and one process-wide lock makes them take turns, call by call. A collective
// holds it while it starts and during each test of its progress, never while it waits, so the
// collectives of two groups progress side by side on two threads and need not start in the same
// order on every rank (nonblocking collectives on different communicators need not). Holding
// the lock through a whole collective would deadlock a rank that runs group B's collective on its
// caller thread while group A's, issued first, waits for the worker, against a rank that ran
// A's first. A program that initialised MPI itself keeps it, with at least that level of thread
// support.
//
// MPI wants MPI_Finalize before a clean exit: mpirun treats a rank that ends without it as a
// failure and stops the job. MPI_Finalize waits for every rank, though, so a rank that exits
// with an error while the others wait in a collective would wait in it forever, and mpirun
// would never learn of the error. Locus therefore finalizes through glibc's on_exit, which sees
// the exit status: after exit status 0 it finalizes (when Locus initialised MPI); after any other
// it leaves MPI alone, mpirun sees the rank fail, and it ends the job at once (Open MPI's
// default). A process killed by a signal or std::terminate never gets here, and mpirun ends the
// job as well. At exit a collective may still be in flight on a worker thread (asynchronous, never
// waited for): finalizing under it is not allowed, so after waiting kExitGrace for it Locus exits
// without finalizing, which ends the job too.

#include "src/distributed/mpi/mpi_runtime.h"

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "locus/errors.h"

namespace locus::distributed {
namespace {

std::timed_mutex g_mpi;
std::atomic<int> g_in_flight{0};  ///< MpiInFlight objects alive

constexpr auto kExitGrace = std::chrono::seconds(2);

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

void finalize_at_exit(int status, void*) {
  if (status != 0) return;  // let mpirun see the failure (Note [MPI runtime])
  const auto deadline = std::chrono::steady_clock::now() + kExitGrace;
  for (;;) {
    {
      std::unique_lock lock(g_mpi, std::defer_lock);
      if (lock.try_lock_until(deadline) && g_in_flight.load() == 0) {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized) MPI_Finalize();
        return;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::fprintf(stderr, "[locus] exiting while an MPI collective is still in flight on another thread; MPI is left "
                       "unfinalized, so mpirun ends the job: wait for every collective before exiting\n");
}

}  // namespace

std::unique_lock<std::timed_mutex> lock_mpi() { return std::unique_lock(g_mpi); }

MpiInFlight::MpiInFlight() { g_in_flight.fetch_add(1); }
MpiInFlight::~MpiInFlight() { g_in_flight.fetch_sub(1); }

void ensure_mpi_initialized() {
  if (mpi_finalized())
    throw DistributedError("MPI was finalized (by the program, or at exit), and MPI cannot start again: make every mpi "
                           "process group before MPI_Finalize");
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED)
      throw DistributedError(std::string("the program initialised MPI with ") + thread_level_name(provided) +
                             "; Locus's mpi process groups call MPI from a worker thread and need MPI_THREAD_SERIALIZED: "
                             "initialise MPI with MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided), or let "
                             "Locus do it");
    return;
  }
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (rc != MPI_SUCCESS) throw DistributedError("MPI_Init_thread failed: " + mpi_error_text(rc));
  on_exit(finalize_at_exit, nullptr);
  if (provided < MPI_THREAD_SERIALIZED)
    throw DistributedError(std::string("this MPI library gives ") + thread_level_name(provided) +
                           " at most; Locus's mpi process groups call MPI from a worker thread and need "
                           "MPI_THREAD_SERIALIZED (Open MPI built with thread support has it)");
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

}  // namespace locus::distributed
