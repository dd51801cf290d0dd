#pragma once
/// \file loss_modules.h
/// The losses as modules (torch.nn.CrossEntropyLoss, ...): options fixed at construction,
/// called as `loss_fn(output, target)`.

#include "locus/nn/loss.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// Options of MSELoss.
struct MSELossOptions {
  /// The reduction, positionally (`MSELossOptions(Reduction::Sum)`).
  MSELossOptions(Reduction reduction = Reduction::Mean) : reduction_(reduction) {}
  /// How the squared errors are folded.
  LOCUS_ARG(Reduction, reduction);
};

/// cross_entropy(output, target, options) as a module.
class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(ClassLossOptions options = {}) : options_(options) {}
  /// The loss of logits `input` against class indices or probabilities `target`.
  Tensor forward(const Tensor& input, const Tensor& target);
  const ClassLossOptions& options() const noexcept { return options_; }

 private:
  ClassLossOptions options_;
};
LOCUS_MODULE(CrossEntropyLoss);

/// nll_loss(output, target, options) as a module.
class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(ClassLossOptions options = {}) : options_(options) {}
  /// The loss of log-probabilities `input` against class indices `target`.
  Tensor forward(const Tensor& input, const Tensor& target);
  const ClassLossOptions& options() const noexcept { return options_; }

 private:
  ClassLossOptions options_;
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

}  // namespace locus::nn
