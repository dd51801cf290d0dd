// Adamax, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_adamax).

#include "locus/optim/adamax.h"

#include <cmath>

#include "locus/ops.h"
#include "src/optim/option_checks.h"
#include "src/optim/param_update.h"

namespace locus::optim {

void Adamax::check(const AdamaxOptions& o) { detail::check_adam_like(o); }

void Adamax::update(const AdamaxOptions& o, detail::ParamUpdate& p) {
  const int64_t step = ++param_step(p.index);
  Tensor g = p.grad;
  if (o.weight_decay() != 0) g = add(g, p.param, o.weight_decay());
  Tensor exp_avg = state(p.index, "exp_avg");
  Tensor exp_inf = state(p.index, "exp_inf");
  exp_avg.mul_(o.beta1()).add_(g, 1 - o.beta1());
  // The infinity norm: max(beta2 * u, |g| + eps), NaN winning as amax's does.
  exp_inf.copy_(maximum(exp_inf.mul_(o.beta2()), add(abs(g), o.eps())));
  const double clr = o.lr() / (1 - std::pow(o.beta1(), static_cast<double>(step)));
  p.param.add_(div(exp_avg, exp_inf), -clr);
}

}  // namespace locus::optim
