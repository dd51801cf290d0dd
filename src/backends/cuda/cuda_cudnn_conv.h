#pragma once
// Convolutions on CUDA through cuDNN's graph API (cuda_cudnn_conv.cpp).

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {

/// One pass of a 2-d convolution (ops::ConvArgs) through cuDNN, with the bias added or its
/// gradient summed beside it; false, having written nothing, where cuDNN has no engine for the
/// geometry and dtype under the current TF32 setting (the front end then takes the general path).
bool cudnn_convolution(const ops::ConvArgs& a);

}  // namespace locus::cuda_backend
