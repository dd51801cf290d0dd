#pragma once
/// \file loss_modules.h
/// The losses as modules (torch.nn.CrossEntropyLoss, ...): options fixed at construction,
/// called as `loss_fn(output, target)`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/nn/functional.h"
#include "locus/nn/loss_options.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/options_module.h"

namespace locus::nn {

/// F::cross_entropy(output, target, options) as a module (weight, ignore_index, reduction,
/// label_smoothing; nn::ClassLossOptions still converts).
/// Its forward: the loss of logits `input` against class indices or probabilities `target`.
class CrossEntropyLossImpl : public LossModule<CrossEntropyLossOptions, &functional::cross_entropy> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(CrossEntropyLoss);

/// F::nll_loss(output, target, options) as a module (weight, ignore_index, reduction).
/// Its forward: the loss of log-probabilities `input` against class indices `target`.
class NLLLossImpl : public LossModule<NLLLossOptions, &functional::nll_loss> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(NLLLoss);

/// F::mse_loss(input, target, options) as a module.
/// Its forward: the mean (or sum, or each) of (input - target)^2.
class MSELossImpl : public LossModule<MSELossOptions, &functional::mse_loss> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(MSELoss);

/// F::l1_loss(input, target, options) as a module.
/// Its forward: |input - target|, reduced.
class L1LossImpl : public LossModule<L1LossOptions, &functional::l1_loss> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(L1Loss);

/// F::smooth_l1_loss(input, target, options) as a module.
/// Its forward: the smooth L1 loss (beta), reduced.
class SmoothL1LossImpl : public LossModule<SmoothL1LossOptions, &functional::smooth_l1_loss> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(SmoothL1Loss);

/// F::huber_loss(input, target, options) as a module.
/// Its forward: the Huber loss (delta), reduced.
class HuberLossImpl : public LossModule<HuberLossOptions, &functional::huber_loss> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(HuberLoss);

/// F::kl_div(input, target, options) as a module.
/// Its forward: the KL divergence of log-probabilities `input` from `target`.
class KLDivLossImpl : public LossModule<KLDivLossOptions, &functional::kl_div> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(KLDivLoss);

/// F::binary_cross_entropy(input, target, options) as a module.
/// Its forward: the binary cross-entropy of probabilities `input` against `target`.
class BCELossImpl : public LossModule<BCELossOptions, &functional::binary_cross_entropy> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(BCELoss);

/// F::binary_cross_entropy_with_logits(input, target, options) as a module.
/// Its forward: the binary cross-entropy of logits `input` against `target`.
class BCEWithLogitsLossImpl : public LossModule<BCEWithLogitsLossOptions, &functional::binary_cross_entropy_with_logits> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(BCEWithLogitsLoss);

/// F::margin_ranking_loss(input1, input2, target, options) as a module.
/// Its forward: max(0, -target (input1 - input2) + margin), reduced.
class MarginRankingLossImpl : public LossModule<MarginRankingLossOptions, &functional::margin_ranking_loss> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(MarginRankingLoss);

/// F::cosine_embedding_loss(input1, input2, target, options) as a module.
/// Its forward: 1 - cos(input1, input2) for target 1, max(0, cos - margin) for -1, reduced.
class CosineEmbeddingLossImpl : public LossModule<CosineEmbeddingLossOptions, &functional::cosine_embedding_loss> {
 public:
  using LossModule::LossModule;
};
LOCUS_MODULE(CosineEmbeddingLoss);

}  // namespace locus::nn

LOCUS_API_END
