#pragma once
/// \file threads.h
/// The CPU threads that kernels, OpenBLAS and oneDNN use (torch.set_num_threads).

namespace locus {

/// Uses at most `n` threads for CPU kernels and matrix products (as torch.set_num_threads).
/// Process-wide. The default is OMP_NUM_THREADS, else the usable cores. Within that ceiling
/// Locus uses fewer threads while other processes keep the cores busy (docs/performance.md,
/// "Under load"). ValueError for n < 1.
void set_num_threads(int n);
/// The ceiling set_num_threads chose (or the default), as torch.get_num_threads.
int get_num_threads() noexcept;

}  // namespace locus
