#pragma once
/// \file nn_ops.h
/// The neural-network functions at the top level, with LibTorch's (ATen's) names, argument
/// order and defaults: `locus::max_pool2d(x, 2)`, `locus::dropout(x, 0.5, is_training())`,
/// `locus::nll_loss(log_probs, target, {}, Reduction::Sum)`. Each is the function of
/// nn::functional (`F::max_pool2d(x, F::MaxPool2dFuncOptions(2))`) with positional arguments
/// instead of an options struct; the two are one implementation, checks and messages included.
/// Where a function lives follows LibTorch: here and in nn::functional, nowhere else.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>

#include "locus/nn/loss.h"
#include "locus/shape.h"
#include "locus/tensor.h"

namespace locus {

/// ATen's reduction constants, `torch::Reduction::Sum`, as the values of nn::Reduction (the
/// type every loss option takes).
namespace Reduction {
/// The per-element losses themselves.
inline constexpr nn::Reduction None = nn::Reduction::None;
/// Their mean.
inline constexpr nn::Reduction Mean = nn::Reduction::Mean;
/// Their sum.
inline constexpr nn::Reduction Sum = nn::Reduction::Sum;
}  // namespace Reduction

/// LibTorch's torch::kNone, for a loss option: `nn::MSELossOptions().reduction(torch::kNone)`.
inline constexpr nn::Reduction kNone = nn::Reduction::None;
/// LibTorch's torch::kMean.
inline constexpr nn::Reduction kMean = nn::Reduction::Mean;
/// LibTorch's torch::kSum.
inline constexpr nn::Reduction kSum = nn::Reduction::Sum;

/// input @ weight^T + bias, as F.linear: input [..., in_features], weight [out_features,
/// in_features], bias [out_features] or undefined (no bias). All on one device
/// (DeviceMismatchError naming 'weight' or 'bias'; a 0-dim CPU tensor does not join), of one
/// dtype (DTypeError), with matching features (ShapeError). Differentiable.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());

/// As torch.dropout(input, p, train): when `train`, zeroes each element with probability p and
/// scales the others by 1 / (1 - p) (random numbers from the global generator, on input's
/// device); otherwise, or with p = 0, returns `input` itself. p = 1 gives zeros. ValueError for
/// p outside [0, 1]; DTypeError for a non-floating input when training. Differentiable.
Tensor dropout(const Tensor& input, double p, bool train);
/// As torch.feature_dropout: whole channels (dim 1 of [N, C, ...], dim 0 of an unbatched
/// [C, ...]) zeroed together, F.dropout2d's rule.
Tensor feature_dropout(const Tensor& input, double p, bool train);

/// As torch.conv1d: input [N, C, L] or [C, L], weight [out, C / groups, k]; stride, padding and
/// dilation one number or one per dim.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
/// As torch.conv2d: input [N, C, H, W] or [C, H, W], weight [out, C / groups, kh, kw].
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
/// As torch.conv_transpose2d: weight [C, out / groups, kh, kw].
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

/// As torch.max_pool1d: a window of kernel_size, stepping by stride (the kernel size when
/// empty).
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
/// As torch.max_pool2d: `max_pool2d(x, 2)` halves H and W.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
/// As torch.avg_pool1d.
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
/// As torch.avg_pool2d; divisor_override replaces the window size as the divisor.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
/// As torch.adaptive_avg_pool2d: output_size one number or (H, W).
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

/// As torch.batch_norm: training normalises with the batch's statistics and updates the
/// running ones (when defined) in place; otherwise the running ones normalise. cudnn_enabled is
/// accepted and ignored (Locus picks its kernel itself).
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps, bool cudnn_enabled = true);
/// As torch.layer_norm over the trailing normalized_shape dims.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5, bool cudnn_enable = true);
/// As torch.group_norm: channels in num_groups groups, each normalised over its channels and
/// the spatial dims.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5, bool cudnn_enabled = true);
/// As torch.embedding (weight first, as ATen has it): the rows of weight at `indices`.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);

/// As torch.mse_loss: (input - target)^2, reduced. ShapeError when the shapes differ (Note
/// [Losses do not broadcast]).
Tensor mse_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction = nn::Reduction::Mean);
/// As torch.l1_loss: |input - target|, reduced.
Tensor l1_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction = nn::Reduction::Mean);
/// As torch.smooth_l1_loss: quadratic below beta, linear above, reduced.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction = nn::Reduction::Mean,
                      double beta = 1.0);
/// As torch.huber_loss.
Tensor huber_loss(const Tensor& input, const Tensor& target, nn::Reduction reduction = nn::Reduction::Mean,
                  double delta = 1.0);
/// As torch.binary_cross_entropy of probabilities against targets in [0, 1], each element
/// weighted by `weight` when defined.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            nn::Reduction reduction = nn::Reduction::Mean);
/// As torch.binary_cross_entropy_with_logits, computed stably from the logits.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(),
                                        nn::Reduction reduction = nn::Reduction::Mean);
/// As torch.nll_loss: -log_probs[i, target[i]] for log-probabilities [N, C] (or [C], or [N, C,
/// d1, ...]) and int64 class indices, with class weights, reduced; a mean over the targets that
/// are not ignore_index (weighted). IndexError for a class outside [0, C).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                nn::Reduction reduction = nn::Reduction::Mean, int64_t ignore_index = -100);
/// As torch.cross_entropy_loss (F.cross_entropy): nll_loss of log_softmax over the class dim, or
/// against class probabilities when target is floating, with label smoothing. Without weight
/// and smoothing it is one fused kernel where the device has it.
Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                          nn::Reduction reduction = nn::Reduction::Mean, int64_t ignore_index = -100,
                          double label_smoothing = 0.0);
/// As torch.kl_div of log-probabilities against probabilities (log-probabilities with
/// log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, nn::Reduction reduction = nn::Reduction::Mean,
              bool log_target = false);
/// As torch.margin_ranking_loss.
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                           nn::Reduction reduction = nn::Reduction::Mean);
/// As torch.cosine_embedding_loss.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                             nn::Reduction reduction = nn::Reduction::Mean);

}  // namespace locus

LOCUS_API_END
