#pragma once
/// \file loss_modules.h
/// The losses as modules (torch.nn.CrossEntropyLoss, ...): options fixed at construction,
/// called as `loss_fn(output, target)`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <utility>

#include "locus/nn/loss.h"
#include "locus/nn/loss_options.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// F::cross_entropy(output, target, options) as a module (weight, ignore_index, reduction,
/// label_smoothing; nn::ClassLossOptions still converts).
class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(CrossEntropyLossOptions options = {}) : options_(std::move(options)) {}
  /// The loss of logits `input` against class indices or probabilities `target`.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const CrossEntropyLossOptions& options() const noexcept { return options_; }

 private:
  CrossEntropyLossOptions options_;
};
LOCUS_MODULE(CrossEntropyLoss);

/// F::nll_loss(output, target, options) as a module (weight, ignore_index, reduction).
class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(NLLLossOptions options = {}) : options_(std::move(options)) {}
  /// The loss of log-probabilities `input` against class indices `target`.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const NLLLossOptions& options() const noexcept { return options_; }

 private:
  NLLLossOptions options_;
};
LOCUS_MODULE(NLLLoss);

/// mse_loss(output, target, reduction) as a module.
class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(MSELossOptions options = {}) : options_(options) {}
  /// The mean (or sum, or each) of (input - target)^2.
  Tensor forward(const Tensor& input, const Tensor& target);
  const MSELossOptions& options() const noexcept { return options_; }

 private:
  MSELossOptions options_;
};
LOCUS_MODULE(MSELoss);

/// F::l1_loss(input, target, options) as a module.
class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(L1LossOptions options = {}) : options_(std::move(options)) {}
  /// |input - target|, reduced.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const L1LossOptions& options() const noexcept { return options_; }

 private:
  L1LossOptions options_;
};
LOCUS_MODULE(L1Loss);

/// F::smooth_l1_loss(input, target, options) as a module.
class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(SmoothL1LossOptions options = {}) : options_(std::move(options)) {}
  /// The smooth L1 loss (beta), reduced.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const SmoothL1LossOptions& options() const noexcept { return options_; }

 private:
  SmoothL1LossOptions options_;
};
LOCUS_MODULE(SmoothL1Loss);

/// F::huber_loss(input, target, options) as a module.
class HuberLossImpl : public Module {
 public:
  explicit HuberLossImpl(HuberLossOptions options = {}) : options_(std::move(options)) {}
  /// The Huber loss (delta), reduced.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const HuberLossOptions& options() const noexcept { return options_; }

 private:
  HuberLossOptions options_;
};
LOCUS_MODULE(HuberLoss);

/// F::kl_div(input, target, options) as a module.
class KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(KLDivLossOptions options = {}) : options_(std::move(options)) {}
  /// The KL divergence of log-probabilities `input` from `target`.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const KLDivLossOptions& options() const noexcept { return options_; }

 private:
  KLDivLossOptions options_;
};
LOCUS_MODULE(KLDivLoss);

/// F::binary_cross_entropy(input, target, options) as a module.
class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(BCELossOptions options = {}) : options_(std::move(options)) {}
  /// The binary cross-entropy of probabilities `input` against `target`.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const BCELossOptions& options() const noexcept { return options_; }

 private:
  BCELossOptions options_;
};
LOCUS_MODULE(BCELoss);

/// F::binary_cross_entropy_with_logits(input, target, options) as a module.
class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(BCEWithLogitsLossOptions options = {}) : options_(std::move(options)) {}
  /// The binary cross-entropy of logits `input` against `target`.
  Tensor forward(const Tensor& input, const Tensor& target);
  /// The options it was built with.
  const BCEWithLogitsLossOptions& options() const noexcept { return options_; }

 private:
  BCEWithLogitsLossOptions options_;
};
LOCUS_MODULE(BCEWithLogitsLoss);

/// F::margin_ranking_loss(input1, input2, target, options) as a module.
class MarginRankingLossImpl : public Module {
 public:
  explicit MarginRankingLossImpl(MarginRankingLossOptions options = {}) : options_(std::move(options)) {}
  /// Max(0, -target (input1 - input2) + margin), reduced.
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  /// The options it was built with.
  const MarginRankingLossOptions& options() const noexcept { return options_; }

 private:
  MarginRankingLossOptions options_;
};
LOCUS_MODULE(MarginRankingLoss);

/// F::cosine_embedding_loss(input1, input2, target, options) as a module.
class CosineEmbeddingLossImpl : public Module {
 public:
  explicit CosineEmbeddingLossImpl(CosineEmbeddingLossOptions options = {}) : options_(std::move(options)) {}
  /// 1 - cos(input1, input2) for target 1, max(0, cos - margin) for -1, reduced.
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);
  /// The options it was built with.
  const CosineEmbeddingLossOptions& options() const noexcept { return options_; }

 private:
  CosineEmbeddingLossOptions options_;
};
LOCUS_MODULE(CosineEmbeddingLoss);

}  // namespace locus::nn

LOCUS_API_END
