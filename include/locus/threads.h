#pragma once
/// \file threads.h
/// The CPU threads that kernels, OpenBLAS and oneDNN use (torch.set_num_threads).

#include "locus/export.h"
LOCUS_API_BEGIN

namespace locus {

/// Uses at most `n` threads for CPU kernels and matrix products (as torch.set_num_threads).
/// Process-wide. The default is OMP_NUM_THREADS, else the usable cores. Within that ceiling
/// Locus uses fewer threads while other processes keep the cores busy (docs/performance.md,
/// "Under load"). Each thread that runs Locus's CPU kernels gets its OpenMP thread count
/// (omp_set_num_threads) set to the number in use, which OpenBLAS and oneDNN read. Call it
/// before parallel work starts, as torch.set_num_threads. ValueError for n < 1.
void set_num_threads(int n);
/// The ceiling set_num_threads chose (or the default), as torch.get_num_threads.
int get_num_threads() noexcept;

}  // namespace locus

LOCUS_API_END
