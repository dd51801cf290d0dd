#pragma once
// Scaled dot-product attention on CUDA through cuDNN's graph API (cuda_cudnn_attention.cpp).

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {

/// One pass of fused attention (ops::AttentionArgs) through cuDNN; false, having written
/// nothing, where cuDNN has no engine for the dtype, shapes and device (or, for a forward whose
/// backward follows, none for the backward), and the front end takes the next path.
bool cudnn_attention(const ops::AttentionArgs& a);

}  // namespace locus::cuda_backend
