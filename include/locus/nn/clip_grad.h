#pragma once
/// \file nn/clip_grad.h
/// Gradient clipping (torch.nn.utils.clip_grad_norm_ and clip_grad_value_).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <vector>

#include "locus/tensor.h"

namespace locus::nn::utils {

/// Scales the gradients of `parameters` in place so that their joint `norm_type`-norm is at most
/// `max_norm`, as torch.nn.utils.clip_grad_norm_, and returns that norm before clipping: a 0-dim
/// float32 tensor on the first gradient's device (0 when no parameter has a gradient). The norm
/// is computed in float32 whatever the gradients' dtype and is never read by the host, so
/// clipping adds no device-host synchronisation; `error_if_nonfinite` reads it (one
/// synchronisation) and throws ValueError when it is inf or NaN. norm_type: any p > 0, or
/// INFINITY for the largest magnitude. After GradScaler::unscale_, this clips the true gradients.
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient of `parameters` in place to [-clip_value, clip_value]
/// (torch.nn.utils.clip_grad_value_).
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace locus::nn::utils

LOCUS_API_END
