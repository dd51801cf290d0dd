#pragma once
/// \file adam.h
/// torch.optim.Adam and torch.optim.AdamW.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/arg.h"
#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of Adam and AdamW, set by name in any order: `AdamOptions(1e-3).betas(0.9, 0.98)`.
struct AdamOptions : OptimizerCloneableOptions<AdamOptions> {
  /// The learning rate, positionally.
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, `Adam(params, 0.1)`
  /// The learning rate.
  LOCUS_ARG(double, lr);
  /// Decay of the running mean of gradients.
  LOCUS_ARG(double, beta1) = 0.9;
  /// Decay of the running mean of squared gradients.
  LOCUS_ARG(double, beta2) = 0.999;
  /// Added to the denominator for stability.
  LOCUS_ARG(double, eps) = 1e-8;
  /// Adam: an L2 penalty added to the gradient; AdamW: decoupled decay (default 0.01 there).
  LOCUS_ARG(double, weight_decay) = 0;
  /// Normalise by the running maximum of the squared-gradient average (AMSGrad).
  LOCUS_ARG(bool, amsgrad) = false;
  /// Keep float32 master copies of float16/bfloat16 parameters (as SGDOptions::master_weights).
  LOCUS_ARG(bool, master_weights) = false;

 public:
  /// Both betas at once, as PyTorch's `betas=(0.9, 0.999)`.
  AdamOptions& betas(double beta1, double beta2) {
    beta1_ = beta1, beta2_ = beta2;
    return *this;
  }
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    f("lr", lr_), f("beta1", beta1_), f("beta2", beta2_), f("eps", eps_), f("weight_decay", weight_decay_);
    f("amsgrad", amsgrad_), f("master_weights", master_weights_);
  }
};

/// Adam (Kingma and Ba), as torch.optim.Adam, with AMSGrad.
class Adam : public Optimizer {
 public:
  /// Adam over groups; a group without options gets `defaults`.
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  /// Adam over one group.
  Adam(std::vector<Tensor> params, AdamOptions defaults = {});
  /// Adam with this learning rate and the other options' defaults.
  Adam(std::vector<Tensor> params, double lr) : Adam(std::move(params), AdamOptions(lr)) {}
  /// One update of every parameter that has a gradient, each group with its options.
  void step() override;
  /// The default options.
  const AdamOptions& options() const noexcept { return static_cast<const AdamOptions&>(defaults()); }

 protected:
  /// The update of Adam (decoupled: AdamW's).
  void adam_step(bool decoupled_weight_decay);
  /// The argument checks of both, PyTorch's messages.
  void check(const char* name) const;
};

/// AdamW (decoupled weight decay, Loshchilov and Hutter), as torch.optim.AdamW.
class AdamW : public Adam {
 public:
  /// AdamW over groups; a group without options gets `defaults`.
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = with_default_decay());
  /// AdamW over one group.
  AdamW(std::vector<Tensor> params, AdamOptions defaults = with_default_decay());
  /// AdamW with this learning rate and PyTorch's AdamW defaults otherwise (weight_decay 0.01).
  AdamW(std::vector<Tensor> params, double lr) : AdamW(std::move(params), with_default_decay().lr(lr)) {}
  /// One update of every parameter that has a gradient, each group with its options.
  void step() override;
  /// AdamOptions with PyTorch's AdamW default weight_decay of 0.01.
  static AdamOptions with_default_decay() { return AdamOptions().weight_decay(0.01); }
};

}  // namespace locus::optim

LOCUS_API_END
