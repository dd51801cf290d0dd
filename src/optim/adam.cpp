// Adam and AdamW: one fused kernel per group, step count, device and dtype where the device has
// it (src/ops/optimizer_step.h), else composed ops; AMSGrad always composed.

#include "locus/optim/adam.h"

#include <cmath>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/ops/optimizer_step.h"
#include "src/optim/py_repr.h"

namespace locus::optim {

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), defaults.clone()) {
  check("Adam");
}

void Adam::check(const char*) const {
  // As PyTorch's checks (of the defaults only), written so that NaN fails them too.
  using detail::py_repr;
  const AdamOptions& o = options();
  if (!(o.lr() >= 0)) throw ValueError("Invalid learning rate: " + py_repr(o.lr()));
  if (!(o.eps() >= 0)) throw ValueError("Invalid epsilon value: " + py_repr(o.eps()));
  if (!(o.beta1() >= 0 && o.beta1() < 1)) throw ValueError("Invalid beta parameter at index 0: " + py_repr(o.beta1()));
  if (!(o.beta2() >= 0 && o.beta2() < 1)) throw ValueError("Invalid beta parameter at index 1: " + py_repr(o.beta2()));
  if (!(o.weight_decay() >= 0)) throw ValueError("Invalid weight_decay value: " + py_repr(o.weight_decay()));
}

void Adam::step() { adam_step(false); }

void Adam::adam_step(bool decoupled) {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  for_each_group<AdamOptions>([&](const AdamOptions& o, size_t first, size_t last) {
    ops::OptimizerHyperparameters hyper;
    hyper.kind = decoupled ? ops::OptimizerKind::AdamW : ops::OptimizerKind::Adam;
    hyper.lr = o.lr(), hyper.weight_decay = o.weight_decay();
    hyper.beta1 = o.beta1(), hyper.beta2 = o.beta2(), hyper.eps = o.eps();
    // The bias corrections depend on each parameter's own step count (a parameter that missed
    // a gradient, or joined later, is behind): one fused call per count, nearly always one.
    std::map<int64_t, ops::FusedUpdate> fused;
    for (size_t i = first; i < last; ++i) {
      Tensor g = gradient(i);
      if (!g.defined()) continue;
      Tensor p = updated(i);
      const int64_t step = ++param_step(i);
      const double bias1 = 1 - std::pow(o.beta1(), static_cast<double>(step));
      const double bias2 = 1 - std::pow(o.beta2(), static_cast<double>(step));
      Tensor m = state(i, "exp_avg");
      Tensor v = state(i, "exp_avg_sq");
      if (!o.amsgrad()) {
        ops::OptimizerHyperparameters h = hyper;
        h.bias_correction1 = bias1, h.bias_correction2 = bias2;
        if (fused.try_emplace(step, h).first->second.add(i, p, g, m, v, false)) continue;
      }
      // Composed: the same arithmetic as the fused kernel, op by op.
      if (o.weight_decay() != 0) {
        if (decoupled)
          p.mul_(1 - o.lr() * o.weight_decay());
        else
          g = add(g, p, o.weight_decay());
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
      p.sub_(div(m, denom), o.lr() / bias1);
      write_back(i);
    }
    for (auto& [step, f] : fused)
      for (size_t i : f.run()) write_back(i);
  });
}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Adam(std::move(param_groups), defaults) {}

void AdamW::step() { adam_step(true); }

}  // namespace locus::optim
