#pragma once
/// \file loss_options.h
/// The options of the losses, as LibTorch spells them (`nn::BCELossOptions().weight(w)`), and
/// their functional aliases (`F::BinaryCrossEntropyFuncOptions`), which LibTorch defines as the
/// same structs.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>

#include "locus/arg.h"
#include "locus/nn/loss.h"
#include "locus/tensor.h"

namespace locus::nn {

/// KLDivLoss's reduction: Reduction's three plus batchmean (the sum divided by the batch size,
/// the mathematical KL divergence). Converts from Reduction: `.reduction(Reduction::Sum)`.
struct KLDivReduction {
  /// The four kinds, as LibTorch's variant holds them (kNone, kBatchMean, kSum, kMean).
  enum Kind { None, BatchMean, Sum, Mean };
  /// One of the four.
  KLDivReduction(Kind which) : kind(which) {}  // NOLINT: implicit, as LibTorch's variant
  /// Reduction::Mean, Sum or None.
  KLDivReduction(Reduction r)  // NOLINT: implicit, as LibTorch's variant
      : kind(r == Reduction::Sum ? Sum : r == Reduction::None ? None : Mean) {}
  /// Which one.
  Kind kind;
};

/// Options of MSELoss and F::mse_loss.
struct MSELossOptions {
  /// The reduction, positionally (`MSELossOptions(Reduction::Sum)`).
  MSELossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}
  /// How the squared errors are folded.
  LOCUS_ARG(Reduction, reduction);
};

/// Options of L1Loss and F::l1_loss.
struct L1LossOptions {
  /// The reduction, positionally.
  L1LossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}
  /// How the absolute errors are folded.
  LOCUS_ARG(Reduction, reduction);
};

/// Options of SmoothL1Loss and F::smooth_l1_loss.
struct SmoothL1LossOptions {
  /// The reduction, positionally.
  SmoothL1LossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}
  /// How the per-element losses are folded.
  LOCUS_ARG(Reduction, reduction);
  /// Where the loss turns from quadratic to linear; 0 gives L1. ValueError when negative.
  LOCUS_ARG(double, beta) = 1.0;
};

/// Options of HuberLoss and F::huber_loss.
struct HuberLossOptions {
  /// The reduction, positionally.
  HuberLossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}
  /// How the per-element losses are folded.
  LOCUS_ARG(Reduction, reduction);
  /// Where the loss turns from quadratic to linear. ValueError unless positive.
  LOCUS_ARG(double, delta) = 1.0;
};

/// Options of KLDivLoss and F::kl_div.
struct KLDivLossOptions {
  /// The reduction, positionally (`KLDivLossOptions(KLDivReduction::BatchMean)`).
  KLDivLossOptions(KLDivReduction reduction = KLDivReduction::Mean) : reduction_(reduction) {}
  /// How the pointwise divergences are folded; BatchMean is the KL divergence.
  LOCUS_ARG(KLDivReduction, reduction);
  /// Whether the target holds log-probabilities too.
  LOCUS_ARG(bool, log_target) = false;
};

/// Options of BCELoss and F::binary_cross_entropy.
struct BCELossOptions {
  /// A rescaling weight of each element, broadcast to the input's shape (undefined: none).
  LOCUS_ARG(Tensor, weight);
  /// How the per-element losses are folded.
  LOCUS_ARG(Reduction, reduction) = Reduction::Mean;
};

/// Options of BCEWithLogitsLoss and F::binary_cross_entropy_with_logits.
struct BCEWithLogitsLossOptions {
  /// A rescaling weight of each element, broadcast to the input's shape (undefined: none).
  LOCUS_ARG(Tensor, weight);
  /// How the per-element losses are folded.
  LOCUS_ARG(Reduction, reduction) = Reduction::Mean;
  /// The weight of the positive term per class, broadcast along the last dim (undefined: 1).
  LOCUS_ARG(Tensor, pos_weight);
};

/// What the options of the class-index losses (CrossEntropyLoss, NLLLoss) share, for the
/// options `Derived` of one of them: a weight per class, the ignored class and the reduction.
/// The setters return `Derived&` (LOCUS_DERIVED_ARG), so a chain goes on with Derived's fields.
template <class Derived>
struct ClassIndexLossOptionsBase {
  /// The defaults: no weight, ignore_index -100, mean.
  ClassIndexLossOptionsBase() = default;
  /// The options of nn::cross_entropy / nn::nll_loss (reduction and ignore_index), as the losses
  /// took them.
  ClassIndexLossOptionsBase(const ClassLossOptions& o)  // NOLINT: implicit, for old callers
      : ignore_index_(o.ignore_index()), reduction_(o.reduction()) {}
  /// A weight per class, shape [C] (undefined: all 1); NLLLoss's mean divides by the targets'
  /// weights.
  LOCUS_DERIVED_ARG(Tensor, weight);
  /// Targets equal to this class contribute nothing (class indices only).
  LOCUS_DERIVED_ARG(int64_t, ignore_index) = -100;
  /// How the per-target losses are folded.
  LOCUS_DERIVED_ARG(Reduction, reduction) = Reduction::Mean;
};

/// Options of CrossEntropyLoss and F::cross_entropy: ClassIndexLossOptionsBase's, and label
/// smoothing (default: none).
struct CrossEntropyLossOptions : ClassIndexLossOptionsBase<CrossEntropyLossOptions> {
  using ClassIndexLossOptionsBase::ClassIndexLossOptionsBase;
  /// Mixes the target with the uniform distribution: (1 - s) * target + s / C. In [0, 1].
  LOCUS_ARG(double, label_smoothing) = 0.0;
};

/// Options of NLLLoss and F::nll_loss: ClassIndexLossOptionsBase's.
struct NLLLossOptions : ClassIndexLossOptionsBase<NLLLossOptions> {
  using ClassIndexLossOptionsBase::ClassIndexLossOptionsBase;
};

/// Options of MarginRankingLoss and F::margin_ranking_loss.
struct MarginRankingLossOptions {
  /// max(0, -y * (x1 - x2) + margin).
  LOCUS_ARG(double, margin) = 0.0;
  /// How the per-pair losses are folded.
  LOCUS_ARG(Reduction, reduction) = Reduction::Mean;
};

/// Options of CosineEmbeddingLoss and F::cosine_embedding_loss.
struct CosineEmbeddingLossOptions {
  /// Dissimilar pairs (y = -1) cost max(0, cos - margin); sensible in [-1, 1].
  LOCUS_ARG(double, margin) = 0.0;
  /// How the per-pair losses are folded.
  LOCUS_ARG(Reduction, reduction) = Reduction::Mean;
};

/// Options of F::cosine_similarity (and CosineSimilarity).
struct CosineSimilarityOptions {
  /// The dim the vectors lie along.
  LOCUS_ARG(int64_t, dim) = 1;
  /// Each norm is clamped to at least eps before dividing.
  LOCUS_ARG(double, eps) = 1e-8;
};

namespace functional {

/// F::mse_loss's options (LibTorch: the same struct).
using MSELossFuncOptions = MSELossOptions;
/// F::l1_loss's options.
using L1LossFuncOptions = L1LossOptions;
/// F::smooth_l1_loss's options.
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
/// F::huber_loss's options.
using HuberLossFuncOptions = HuberLossOptions;
/// F::kl_div's options.
using KLDivFuncOptions = KLDivLossOptions;
/// F::binary_cross_entropy's options.
using BinaryCrossEntropyFuncOptions = BCELossOptions;
/// F::binary_cross_entropy_with_logits's options.
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
/// F::cross_entropy's options.
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
/// F::nll_loss's options.
using NLLLossFuncOptions = NLLLossOptions;
/// F::margin_ranking_loss's options.
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
/// F::cosine_embedding_loss's options.
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
/// F::cosine_similarity's options.
using CosineSimilarityFuncOptions = CosineSimilarityOptions;

/// Options of F::normalize: x / max(||x||_p along dim, eps).
struct NormalizeFuncOptions {
  /// The norm's exponent.
  LOCUS_ARG(double, p) = 2.0;
  /// The dim the vectors lie along.
  LOCUS_ARG(int64_t, dim) = 1;
  /// The smallest norm divided by.
  LOCUS_ARG(double, eps) = 1e-12;
};

/// Options of F::dropout.
struct DropoutFuncOptions {
  /// The probability of an element being zeroed, positionally (`DropoutFuncOptions(0.2)`).
  DropoutFuncOptions(double p = 0.5) : p_(p) {}
  /// The probability of an element being zeroed.
  LOCUS_ARG(double, p);
  /// Whether to drop at all (F.dropout's training=True by default).
  LOCUS_ARG(bool, training) = true;
};

}  // namespace functional
}  // namespace locus::nn

LOCUS_API_END
