// NAdam, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_nadam).

#include "locus/optim/nadam.h"

#include <cmath>

#include "locus/ops.h"
#include "src/optim/option_checks.h"
#include "src/optim/param_update.h"

namespace locus::optim {

void NAdam::check(const NAdamOptions& o) {
  detail::check_adam_like(o);
  detail::check_non_negative(o.momentum_decay(), "momentum_decay value");
}

void NAdam::update(const NAdamOptions& o, detail::ParamUpdate& p) {
  const double step = static_cast<double>(++param_step(p.index));
  const double bias_correction2 = 1 - std::pow(o.beta2(), step);
  const Tensor g = o.weight_decay() != 0 ? add(p.grad, p.param, o.weight_decay()) : p.grad;
  // The momentum cache mu_t and mu_{t+1}.
  const double mu = o.beta1() * (1. - 0.5 * std::pow(0.96, step * o.momentum_decay()));
  const double mu_next = o.beta1() * (1. - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay()));
  // Note [NAdam's float32 product]: PyTorch keeps the product of the mu's in a float32
  // tensor (`torch.tensor(1.)`) whatever the parameters' dtype, so each product is rounded
  // to float32 (the factor too, as a float32 tensor times a Python number is); the same
  // roundings here keep float64 results equal to PyTorch's.
  double& product = param_scalar(p.index, "mu_product", 1.0);
  const float mu_product = static_cast<float>(product) * static_cast<float>(mu);
  const float mu_product_next = mu_product * static_cast<float>(mu) * static_cast<float>(mu_next);
  product = mu_product;
  Tensor exp_avg = state(p.index, "exp_avg");
  Tensor exp_avg_sq = state(p.index, "exp_avg_sq");
  exp_avg.mul_(o.beta1()).add_(g, 1 - o.beta1());
  exp_avg_sq.mul_(o.beta2()).add_(mul(g, g), 1 - o.beta2());
  const Tensor denom = div(exp_avg_sq, bias_correction2).sqrt_().add_(o.eps());
  p.param.add_(div(g, denom), -o.lr() * (1. - mu) / (1. - static_cast<double>(mu_product)));
  p.param.add_(div(exp_avg, denom), -o.lr() * mu_next / (1. - static_cast<double>(mu_product_next)));
}

}  // namespace locus::optim
