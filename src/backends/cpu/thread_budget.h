#pragma once
// How many threads CPU kernels use now: Note [Thread budget].

#include <cstdint>
#include "locus/export.h"

// Note [Thread budget]
// Kernels, OpenBLAS and oneDNN share libgomp's threads (Note [CPU threads]). libgomp's workers
// spin between parallel regions and every region waits for its slowest thread, so when other
// processes (a compile, a DataLoader, a second rank, CI's neighbours) keep the cores busy, a
// descheduled worker holds up every region: an MLP step at batch 64 took 35 ms with one busy
// neighbour on 2 cores instead of 0.9 ms on one thread. Passive waiting (OMP_WAIT_POLICY) can
// only be chosen before libgomp starts, i.e. by the user's environment, and costs a futex wake
// per region on a quiet machine; docs/performance.md ("Under load") has the measurements.
//
// So Locus sizes its regions to the cores that are free. Every 10 ms, the first kernel that
// starts reads the number of runnable threads on the machine (/proc/loadavg's fourth field,
// one pread), takes Locus's own current team as runnable, and sets the budget to the cores
// left by the others, between 1 and the ceiling (OMP_NUM_THREADS or the cores, and
// set_num_threads). It lowers the budget after 2 samples in a row ask for fewer threads and
// raises it after 5 ask for more, so a short burst neither starves nor thrashes it. Each
// thread that launches a kernel brings its own OpenMP setting (omp_set_num_threads) to the
// budget, which OpenBLAS and oneDNN read at each call, so all three follow one policy. Where
// /proc/loadavg cannot be read the budget stays at the ceiling.

// Exported for Locus's tests (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::cpu {

/// The most threads a kernel may use: OMP_NUM_THREADS or the cores at start-up, or what
/// set_num_threads chose. Sizes per-thread scratch space.
int thread_ceiling() noexcept;

/// The threads a parallel region may use now (1..thread_ceiling()), with the calling thread's
/// OpenMP setting brought to it so OpenBLAS and oneDNN use the same number.
int threads_now() noexcept;

/// The budget after one sample (Note [Thread budget]), as a pure function so it can be
/// tested: `runnable` threads on a machine of `cpus` cores while Locus runs `current` of its
/// own; `down` and `up` count the consecutive samples that asked for fewer or more threads
/// and are updated.
int next_thread_budget(int runnable, int cpus, int current, int ceiling, int& down, int& up) noexcept;

}  // namespace locus::cpu

LOCUS_API_END
