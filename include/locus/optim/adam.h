#pragma once
/// \file adam.h
/// torch.optim.Adam and torch.optim.AdamW.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of Adam and AdamW, set by name in any order: `AdamOptions(1e-3).betas(0.9, 0.98)`.
struct AdamOptions : AdamFamilyOptions<AdamOptions> {
  /// The learning rate, positionally.
  AdamOptions(double lr = 1e-3) : AdamFamilyOptions(lr) {}  // NOLINT: implicit, `Adam(params, 0.1)`
  /// Normalise by the running maximum of the squared-gradient average (AMSGrad).
  LOCUS_ARG(bool, amsgrad) = false;

 public:
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    AdamFamilyOptions::for_each_option(f);
    f("amsgrad", amsgrad_);
  }
};

/// Adam (Kingma and Ba), as torch.optim.Adam, with AMSGrad.
class Adam : public OptimizerFor<Adam, AdamOptions> {
  LOCUS_OPTIMIZER_HOOKS(AdamOptions);

 protected:
  /// AdamW's decoupled weight decay instead of Adam's L2 penalty.
  bool decoupled_ = false;
};

/// LibTorch's AdamWOptions: AdamOptions whose weight_decay starts at AdamW's default, 0.01
/// (`AdamWOptions(1e-3).weight_decay(0.05)`). The setters return AdamOptions&, which AdamW takes.
struct AdamWOptions : AdamOptions {
  /// The learning rate, positionally.
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay(0.01); }  // NOLINT: implicit, as AdamOptions
};

/// AdamW (decoupled weight decay, Loshchilov and Hutter), as torch.optim.AdamW.
class AdamW : public Adam {
 public:
  /// AdamW over groups; a group without options gets `defaults`.
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = with_default_decay())
      : Adam(std::move(param_groups), std::move(defaults)) {
    decoupled_ = true;
  }
  /// AdamW over one group.
  AdamW(std::vector<Tensor> params, AdamOptions defaults = with_default_decay())
      : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
  /// AdamW with this learning rate and PyTorch's AdamW defaults otherwise (weight_decay 0.01).
  AdamW(std::vector<Tensor> params, double lr) : AdamW(std::move(params), with_default_decay().lr(lr)) {}
  /// AdamOptions with PyTorch's AdamW default weight_decay of 0.01.
  static AdamOptions with_default_decay() { return AdamWOptions(); }
};

}  // namespace locus::optim

LOCUS_API_END
