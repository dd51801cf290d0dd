#pragma once
/// \file functional.h
/// What the layers compute, as functions (torch.nn.functional's linear and dropout). Each checks
/// its arguments' devices, dtypes and shapes first, so an error names it and the argument, not
/// an op it is built from: "... (when checking argument 'weight' of 'linear')".

#include "locus/tensor.h"

namespace locus::nn {

/// input @ weight^T + bias, as F.linear: input [..., in_features], weight [out_features,
/// in_features], bias [out_features] or undefined (no bias). All on one device
/// (DeviceMismatchError naming 'weight' or 'bias'; a 0-dim CPU tensor does not join), of one
/// dtype (DTypeError), with matching features (ShapeError). Differentiable.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());

/// As F.dropout: when `training`, zeroes each element with probability p and scales the others
/// by 1 / (1 - p) (random numbers from the global generator, on input's device); otherwise, or
/// with p = 0, returns `input` itself. p = 1 gives zeros. ValueError for p outside [0, 1];
/// DTypeError for a non-floating input when training. Differentiable.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);

}  // namespace locus::nn
