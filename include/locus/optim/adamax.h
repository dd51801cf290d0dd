#pragma once
/// \file adamax.h
/// torch.optim.Adamax.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/arg.h"
#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of Adamax (PyTorch's defaults), set by name in any order.
struct AdamaxOptions : OptimizerCloneableOptions<AdamaxOptions> {
  /// The learning rate, positionally.
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT: implicit, `Adamax(params, 0.1)`
  /// The learning rate.
  LOCUS_ARG(double, lr);
  /// Decay of the running mean of gradients.
  LOCUS_ARG(double, beta1) = 0.9;
  /// Decay of the running mean of squared gradients (Adamax: of the infinity norm).
  LOCUS_ARG(double, beta2) = 0.999;
  /// Added to the denominator for stability.
  LOCUS_ARG(double, eps) = 1e-8;
  /// L2 penalty added to the gradient.
  LOCUS_ARG(double, weight_decay) = 0;
  /// Keep float32 master copies of float16/bfloat16 parameters (as SGDOptions::master_weights).
  LOCUS_ARG(bool, master_weights) = false;

 public:
  /// Both betas at once, as PyTorch's `betas=(0.9, 0.999)`.
  auto& betas(double beta1, double beta2) {
    beta1_ = beta1, beta2_ = beta2;
    return *this;
  }
  /// Calls f(name, member) for every option (OptimizerCloneableOptions).
  template <typename F>
  void for_each_option(F&& f) {
    f("lr", lr_), f("beta1", beta1_), f("beta2", beta2_), f("eps", eps_), f("weight_decay", weight_decay_),
        f("master_weights", master_weights_);
  }
};

/// Adamax (Adam with the infinity norm, Kingma and Ba), as torch.optim.Adamax.
class Adamax : public Optimizer {
 public:
  /// Adamax over groups; a group without options gets `defaults`.
  Adamax(std::vector<OptimizerParamGroup> param_groups, AdamaxOptions defaults = {});
  /// Adamax over one group.
  Adamax(std::vector<Tensor> params, AdamaxOptions defaults = {})
      : Adamax(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  /// Adamax with this learning rate and the other options' defaults.
  Adamax(std::vector<Tensor> params, double lr) : Adamax(std::move(params), AdamaxOptions(lr)) {}
  /// One update of every parameter that has a gradient, each group with its options.
  void step() override;
  /// The default options.
  const AdamaxOptions& options() const noexcept { return static_cast<const AdamaxOptions&>(defaults()); }
};

}  // namespace locus::optim

LOCUS_API_END
