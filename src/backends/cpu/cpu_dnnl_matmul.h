#pragma once
// Products through oneDNN (cpu_dnnl_matmul.cpp), when this build has it.

#include "src/ops/kernel_table.h"

namespace locus::cpu {

/// Runs `args` (float32 or bfloat16, with its bias and epilogue) with oneDNN's matmul and
/// returns true, or returns false when this build has no oneDNN, the dtype is another, or
/// oneDNN has no fast kernel for this CPU and layout, or the product is scaled (alpha != 1 or
/// beta != 0) (the caller then uses OpenBLAS, widening
/// bfloat16 to float32).
bool dnnl_matmul(const ops::MatmulArgs& args);

/// True when float32 products should go to oneDNN rather than OpenBLAS on this CPU.
bool dnnl_preferred_for_float32() noexcept;

/// C = A B + beta C for row-major float32 operands with leading dimensions (BLAS's sgemm with
/// alpha 1; `transpose_a`/`transpose_b` read A as [k, m] and B as [n, k]) and beta 0 or 1, with
/// oneDNN's matmul: the fused kernels' tiles (attention) on CPUs where dnnl_preferred_for_float32.
/// Called inside an OpenMP region it runs on the calling thread. False when this build has no
/// oneDNN, beta is another value or oneDNN has no brgemm kernel for these shapes and strides
/// (the caller uses BLAS).
bool dnnl_gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace locus::cpu
