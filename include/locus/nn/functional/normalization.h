#pragma once
/// \file normalization.h
/// The normalizations of torch.nn.functional and channel dropout: F::batch_norm, F::group_norm,
/// F::instance_norm, F::dropout2d.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus::nn::functional {

/// Options of F::batch_norm: `F::BatchNormFuncOptions().weight(w).bias(b).training(true)`.
struct BatchNormFuncOptions {
  /// Per-channel scale; undefined: 1.
  LOCUS_ARG(Tensor, weight);
  /// Per-channel shift; undefined: 0.
  LOCUS_ARG(Tensor, bias);
  /// Normalise with the batch's statistics (and update the running ones) rather than the
  /// running ones.
  LOCUS_ARG(bool, training) = false;
  /// The running estimates move this far towards the batch's: r = (1 - m) r + m batch.
  LOCUS_ARG(double, momentum) = 0.1;
  /// Added to the variance before the square root.
  LOCUS_ARG(double, eps) = 1e-5;
};

/// As F.batch_norm over the channel dim 1 of input [N, C, ...] (statistics over every other
/// dim): training uses the batch's mean and biased variance, and updates running_mean and
/// running_var in place (when defined) with the mean and the unbiased variance; otherwise the
/// running statistics normalise. A float16/bfloat16 input is normalised with float32
/// statistics and returned in its dtype (the statistics keep theirs). ValueError "Expected more
/// than 1 value per channel when training" for one element per channel; ShapeError for
/// statistics, weight or bias of a size other than C. Differentiable in input, weight and bias.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options = {});

/// Options of F::group_norm: `F::GroupNormFuncOptions(8).weight(w).bias(b)`.
struct GroupNormFuncOptions {
  /// The number of channel groups.
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}
  /// The number of channel groups (it divides the channels).
  LOCUS_ARG(int64_t, num_groups);
  /// Per-channel scale; undefined: 1.
  LOCUS_ARG(Tensor, weight);
  /// Per-channel shift; undefined: 0.
  LOCUS_ARG(Tensor, bias);
  /// Added to the variance.
  LOCUS_ARG(double, eps) = 1e-5;
};

/// As F.group_norm: input [N, C, ...] normalised over each group of C / num_groups channels and
/// every spatial position, with the biased variance, then scaled and shifted per channel.
/// Computed in float32 for float16/bfloat16 inputs (autocast's float32 list). ShapeError when
/// num_groups does not divide C or weight/bias are not [C]. Differentiable.
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);

/// Options of F::instance_norm.
struct InstanceNormFuncOptions {
  /// Running mean to use (eval) or update (training with use_input_stats); may be undefined.
  LOCUS_ARG(Tensor, running_mean);
  /// Running variance, as running_mean.
  LOCUS_ARG(Tensor, running_var);
  /// Per-channel scale; undefined: 1.
  LOCUS_ARG(Tensor, weight);
  /// Per-channel shift; undefined: 0.
  LOCUS_ARG(Tensor, bias);
  /// Normalise each instance with its own statistics (true) or with the running ones.
  LOCUS_ARG(bool, use_input_stats) = true;
  /// As batch_norm's.
  LOCUS_ARG(double, momentum) = 0.1;
  /// Added to the variance.
  LOCUS_ARG(double, eps) = 1e-5;
};

/// As F.instance_norm: each (sample, channel) plane of input [N, C, ...] normalised by its own
/// mean and biased variance; running statistics, when given, are updated with the mean over the
/// batch of each channel's statistics (unbiased variance). Differentiable.
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});

/// Options of F::dropout2d.
struct Dropout2dFuncOptions {
  /// The probability of a channel being zeroed.
  Dropout2dFuncOptions(double p = 0.5) : p_(p) {}
  /// The probability of a channel being zeroed.
  LOCUS_ARG(double, p);
  /// Whether to drop at all.
  LOCUS_ARG(bool, training) = true;
};

/// As F.dropout2d: when training, zeroes whole channels (what follows the first two dims: each
/// [H, W] plane of [N, C, H, W]; a 3-d input is [N, C, L], as PyTorch 1.13 reads it) with
/// probability p and scales the others by 1 / (1 - p). ValueError for p outside [0, 1];
/// ShapeError for fewer than 2 dims. Differentiable.
Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {});

}  // namespace locus::nn::functional

LOCUS_API_END
