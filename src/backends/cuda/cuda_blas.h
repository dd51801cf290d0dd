#pragma once
// Matrix products on CUDA: cuBLAS for the floating types, Locus's tiled kernel for integers.

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {

/// C[b] = A[b] @ B[b] on the current stream of args.device. float32 runs in full precision
/// unless TF32 is allowed (cuda::set_allow_tf32 / set_float32_matmul_precision), as in PyTorch.
void matmul(const ops::MatmulArgs& args);

}  // namespace locus::cuda_backend
