// RAdam, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_radam).

#include "locus/optim/radam.h"

#include <cmath>

#include "locus/factories.h"
#include "locus/ops.h"
#include "src/optim/option_checks.h"
#include "src/optim/param_update.h"

namespace locus::optim {

void RAdam::check(const RAdamOptions& o) { detail::check_adam_like(o); }

void RAdam::update(const RAdamOptions& o, detail::ParamUpdate& p) {
  const double step = static_cast<double>(++param_step(p.index));
  const double bias_correction1 = 1 - std::pow(o.beta1(), step);
  const double bias_correction2 = 1 - std::pow(o.beta2(), step);
  const Tensor g = o.weight_decay() != 0 ? add(p.grad, p.param, o.weight_decay()) : p.grad;
  Tensor exp_avg = state(p.index, "exp_avg");
  Tensor exp_avg_sq = state(p.index, "exp_avg_sq");
  exp_avg.mul_(o.beta1()).add_(g, 1 - o.beta1());
  exp_avg_sq.mul_(o.beta2()).add_(mul(g, g), 1 - o.beta2());
  const Tensor corrected = div(exp_avg, bias_correction1);
  // The maximum length of the approximated simple moving average, and its length now.
  const double rho_inf = 2 / (1 - o.beta2()) - 1;
  const double rho_t = rho_inf - 2 * step * std::pow(o.beta2(), step) / bias_correction2;
  if (rho_t > 5.) {
    // The variance is tractable: rectify the adaptive rate.
    const double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
    // sqrt(c2) / (sqrt(v) + eps), as PyTorch's `number / tensor` (the reciprocal, times).
    const Tensor denom = sqrt(exp_avg_sq).add_(o.eps());
    const Tensor adaptive = mul(div(ones_like(denom), denom), std::sqrt(bias_correction2));
    p.param.sub_(mul(mul(mul(corrected, o.lr()), adaptive), rect));
  } else {
    p.param.sub_(mul(corrected, o.lr()));
  }
}

}  // namespace locus::optim
