#pragma once
/// \file functional.h
/// What the layers compute, as functions (torch.nn.functional's linear and dropout). Each checks
/// its arguments' devices, dtypes and shapes first, so an error names it and the argument, not
/// an op it is built from: "... (when checking argument 'weight' of 'linear')".

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/nn/loss.h"
#include "locus/nn/loss_options.h"
#include "locus/nn_ops.h"
#include "locus/tensor.h"

namespace locus::nn {

/// LibTorch's torch::nn::functional: every functional form, with its `...FuncOptions` where
/// LibTorch has one. Use it as `namespace F = locus::nn::functional;` then `F::linear(x, w, b)`,
/// `F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().label_smoothing(0.1))`.
/// Every loss takes the reduction none, mean or sum (Reduction) and, unlike PyTorch, refuses an
/// input and target of different shapes instead of broadcasting them (Note [Losses do not
/// broadcast]); each checks devices, dtypes and shapes first and names itself in its errors.
namespace functional {

/// As F.linear: input @ weight^T + bias (locus::linear).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());

/// As F.dropout(input, p, training) (locus::dropout).
Tensor dropout(const Tensor& input, const DropoutFuncOptions& options = {});

/// As F.mse_loss: (input - target)^2, reduced (locus::mse_loss).
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});

/// As F.l1_loss: |input - target|, reduced.
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});

/// As F.smooth_l1_loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input -
/// target), reduced; beta = 0 is l1_loss. ValueError for a negative beta.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {});

/// As F.huber_loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), reduced. ValueError
/// unless delta > 0.
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {});

/// As F.kl_div of log-probabilities `input` against probabilities `target` (log-probabilities
/// with log_target): target (log target - input) pointwise, 0 where target is 0; reduced by
/// mean (over every element, as PyTorch 1.13), sum, none or batchmean (sum / input.size(0)).
/// The gradient with respect to a target element that is 0 leaves out t log t's (infinite) term,
/// where PyTorch's is NaN.
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});

/// As F.binary_cross_entropy of probabilities `input` against `target` in [0, 1]:
/// -weight (t log x + (1 - t) log(1 - x)), each log clamped at -100 as PyTorch does, reduced.
/// ShapeError for different shapes, ValueError for an input element outside [0, 1] (this reads
/// the input on the host: a wait on an accelerator), DTypeError for input and target of two dtypes.
/// Where an input is exactly 0 or 1 the clamped log's gradient is 0, where PyTorch's hand-written
/// one is (x - t) / 1e-12: finite either way, and equal everywhere else.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});

/// As F.binary_cross_entropy_with_logits: binary_cross_entropy(sigmoid(input), target) computed
/// stably from the logits (PyTorch's log-sum-exp form), with pos_weight p weighting the positive
/// term: -weight (p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), reduced.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options = {});

/// As F.cross_entropy, with class weights (a mean divides by the weights of the counted
/// targets), ignore_index and label_smoothing (PyTorch 1.13's formula: (1 - s) * the loss +
/// s / C * the loss against the uniform distribution, weighted and ignored alike). Class indices
/// or class probabilities as target. Without weight and label smoothing it is one fused kernel
/// where the device has it.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});

/// As F.nll_loss, with class weights (locus::nll_loss).
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});

/// As F.margin_ranking_loss: max(0, -target (input1 - input2) + margin), reduced; the three
/// broadcast together and must have one number of dims (ShapeError otherwise, as PyTorch).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options = {});

/// As F.cosine_embedding_loss: 1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin)
/// where it is -1 (0 elsewhere), cos taken along the last dim of [N, D] inputs with a [N]
/// target (or [D] inputs with a 0-dim target), reduced.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options = {});

/// As F.cosine_similarity: sum(x1 x2) / sqrt(max(sum(x1^2) sum(x2^2), eps^2)) along dim, the
/// inputs broadcast together.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});

/// As F.normalize: input / max(||input||_p along dim, eps), for p >= 1 or infinity.
Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options = {});

}  // namespace functional
}  // namespace locus::nn

LOCUS_API_END
