#pragma once
// The CUDA backend's kernel table.

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {
/// Kernels for every op and dtype, launched on the current stream of the operands' device.
const ops::KernelTable& kernel_table() noexcept;
}  // namespace locus::cuda_backend
