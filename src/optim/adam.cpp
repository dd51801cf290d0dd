// Adam and AdamW: one fused kernel per group, step count, device and dtype where the device has
// it (src/ops/optimizer_step.h), else composed ops; AMSGrad always composed.

#include "locus/optim/adam.h"

#include <cmath>

#include "locus/ops.h"
#include "src/optim/option_checks.h"
#include "src/optim/param_update.h"

namespace locus::optim {

void Adam::check(const AdamOptions& o) { detail::check_adam_like(o); }

void Adam::update(const AdamOptions& o, detail::ParamUpdate& p) {
  const size_t i = p.index;
  Tensor g = p.grad;
  const int64_t step = ++param_step(i);
  const double bias1 = 1 - std::pow(o.beta1(), static_cast<double>(step));
  const double bias2 = 1 - std::pow(o.beta2(), static_cast<double>(step));
  Tensor m = state(i, "exp_avg");
  Tensor v = state(i, "exp_avg_sq");
  if (!o.amsgrad()) {
    // The bias corrections depend on each parameter's own step count (a parameter that missed
    // a gradient, or joined later, is behind): one fused call per count, nearly always one.
    ops::OptimizerHyperparameters hyper;
    hyper.kind = decoupled_ ? ops::OptimizerKind::AdamW : ops::OptimizerKind::Adam;
    hyper.lr = o.lr(), hyper.weight_decay = o.weight_decay();
    hyper.beta1 = o.beta1(), hyper.beta2 = o.beta2(), hyper.eps = o.eps();
    hyper.bias_correction1 = bias1, hyper.bias_correction2 = bias2;
    if (p.fuse(step, hyper, m, v, false)) return;
  }
  // Composed: the same arithmetic as the fused kernel, op by op.
  if (o.weight_decay() != 0) {
    if (decoupled_)
      p.param.mul_(1 - o.lr() * o.weight_decay());
    else
      g = add(g, p.param, o.weight_decay());
  }
  m.mul_(o.beta1()).add_(g, 1 - o.beta1());
  v.mul_(o.beta2()).add_(mul(g, g), 1 - o.beta2());
  Tensor second = v;
  if (o.amsgrad()) {
    Tensor& max_v = state(i, "max_exp_avg_sq");
    max_v.copy_(maximum(max_v, v));
    second = max_v;
  }
  // p -= lr/bias1 * m / (sqrt(v)/sqrt(bias2) + eps), PyTorch's order of operations.
  const Tensor denom = add(div(sqrt(second), std::sqrt(bias2)), o.eps());
  p.param.sub_(div(m, denom), o.lr() / bias1);
}

}  // namespace locus::optim
