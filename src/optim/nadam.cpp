// NAdam, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_nadam).

#include "locus/optim/nadam.h"

#include <cmath>

#include "locus/autograd.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/optim/adam_checks.h"

namespace locus::optim {

NAdam::NAdam(std::vector<OptimizerParamGroup> param_groups, NAdamOptions o)
    : Optimizer(std::move(param_groups), o.clone()) {
  detail::check_adam_like(o);
  if (!(o.momentum_decay() >= 0))
    throw ValueError("Invalid momentum_decay value: " + detail::py_repr(o.momentum_decay()));
}

void NAdam::step() {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  for_each_group<NAdamOptions>([&](const NAdamOptions& o, size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      Tensor g = gradient(i);
      if (!g.defined()) continue;
      Tensor p = updated(i);
      const double step = static_cast<double>(++param_step(i));
      const double bias_correction2 = 1 - std::pow(o.beta2(), step);
      if (o.weight_decay() != 0) g = add(g, p, o.weight_decay());
      // The momentum cache mu_t and mu_{t+1}.
      const double mu = o.beta1() * (1. - 0.5 * std::pow(0.96, step * o.momentum_decay()));
      const double mu_next = o.beta1() * (1. - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay()));
      // Note [NAdam's float32 product]: PyTorch keeps the product of the mu's in a float32
      // tensor (`torch.tensor(1.)`) whatever the parameters' dtype, so each product is rounded
      // to float32 (the factor too, as a float32 tensor times a Python number is); the same
      // roundings here keep float64 results equal to PyTorch's.
      double& product = param_scalar(i, "mu_product", 1.0);
      const float mu_product = static_cast<float>(product) * static_cast<float>(mu);
      const float mu_product_next = mu_product * static_cast<float>(mu) * static_cast<float>(mu_next);
      product = mu_product;
      Tensor exp_avg = state(i, "exp_avg");
      Tensor exp_avg_sq = state(i, "exp_avg_sq");
      exp_avg.mul_(o.beta1()).add_(g, 1 - o.beta1());
      exp_avg_sq.mul_(o.beta2()).add_(mul(g, g), 1 - o.beta2());
      const Tensor denom = div(exp_avg_sq, bias_correction2).sqrt_().add_(o.eps());
      p.add_(div(g, denom), -o.lr() * (1. - mu) / (1. - static_cast<double>(mu_product)));
      p.add_(div(exp_avg, denom), -o.lr() * mu_next / (1. - static_cast<double>(mu_product_next)));
      write_back(i);
    }
  });
}

}  // namespace locus::optim
