#pragma once
// The normalisation ops' front ends (Note [One recipe] in src/ops/structured_call.h): what
// nn::functional calls once it has checked its arguments the way PyTorch's messages say.

#include <optional>

#include "locus/tensor.h"

namespace locus::ops {

/// Layer normalisation of `input` over its trailing dims `dims` (nn::functional::layer_norm,
/// arguments checked there): autocast, the device rule, then the fused kernel where the device
/// has KernelTable::layer_norm (one node, NativeLayerNormBackward0), else the composition of
/// reductions and elementwise ops. `weight` and `bias` may be undefined.
Tensor layer_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& dims, double eps);

/// RMS normalisation over the trailing dims `dims`, as layer_norm without the mean and bias;
/// `eps` defaults to the machine epsilon of the dtype it computes in (after autocast).
Tensor rms_norm(const Tensor& input, const Tensor& weight, const Shape& dims, std::optional<double> eps);

/// The dtype normalisation statistics are computed in: float32 for float16 and bfloat16 inputs
/// (as PyTorch's kernels accumulate), else the input's.
DType statistics_dtype(DType dtype);

/// A [C] tensor `t` in `dtype`, viewed as [1, C, 1, ...] to broadcast over an input of `rank` dims.
Tensor per_channel(const Tensor& t, int64_t rank, DType dtype);

/// running = (1 - momentum) running + momentum value, in running's dtype, outside autograd.
void update_running(Tensor running, const Tensor& value, double momentum);

/// y = input scale[c] + shift[c] over `input` [N, C, ...] (float, scale and shift [C]): batch
/// norm's normalisation in either mode, one pass of KernelTable::batch_norm's Affine kernel and
/// one node (NativeBatchNormBackward0) where the device has it, else addcmul. Differentiable in
/// all three operands.
Tensor channel_affine(const Tensor& input, const Tensor& scale, const Tensor& shift);

/// Training-mode batch norm of `input` [N, C, ...] over `dims` (0 and 2...), `count` values per
/// channel (> 1; nn::functional::batch_norm checks the arguments): one node,
/// NativeBatchNormBackward0, whose statistics, sums and input gradient are one kernel each where
/// the device has KernelTable::batch_norm, else ops (Note [Batch norm in training]). Updates the
/// running statistics when they are defined.
Tensor batch_norm_training(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, double momentum, double eps, const Shape& dims, int64_t count);

}  // namespace locus::ops
