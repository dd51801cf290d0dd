#pragma once
// Linear's forward and backward as fused kernels where the device has them (Note [Fused
// kernels] in src/ops/fused.h).

#include "locus/tensor.h"
#include "src/ops/epilogue.h"

namespace locus::ops {

/// input [..., K] times weight [N, K] transposed, plus bias [N] (when defined), with `epilogue`
/// applied: one product kernel that writes the result once where the device has
/// KernelTable::linear, else matmul, add and the activation. The backward masks the ReLU and
/// sums the bias gradient in one pass (KernelTable::linear_grad). Autocast decides its dtype
/// first (the lower-precision list). The arguments are nn::linear's, already checked.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias, Epilogue epilogue);

}  // namespace locus::ops
