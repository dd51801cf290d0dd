#pragma once
// Linear with the activation after it folded into its product: what Sequential runs for a
// Linear followed by a ReLU or GELU (Note [Fused kernels] in src/ops/fused.h).

#include "locus/tensor.h"
#include "src/ops/linear.h"
#include "locus/export.h"

// Exported for Locus's tests (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::nn {

/// locus::linear(input, weight, bias) followed by `epilogue`, with nn::linear's checks and errors,
/// then ops::linear; the activation runs inside the product kernel where the device has one.
Tensor linear_with_activation(const Tensor& input, const Tensor& weight, const Tensor& bias, ops::Epilogue epilogue);

}  // namespace locus::nn

LOCUS_API_END
