// Adamax, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_adamax).

#include "locus/optim/adamax.h"

#include <cmath>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/optim/adam_checks.h"

namespace locus::optim {

Adamax::Adamax(std::vector<OptimizerParamGroup> param_groups, AdamaxOptions o)
    : Optimizer(std::move(param_groups), o.clone()) {
  detail::check_adam_like(o);
}

void Adamax::step() {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  for_each_group<AdamaxOptions>([&](const AdamaxOptions& o, size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      Tensor g = gradient(i);
      if (!g.defined()) continue;
      Tensor p = updated(i);
      const int64_t step = ++param_step(i);
      if (o.weight_decay() != 0) g = add(g, p, o.weight_decay());
      Tensor exp_avg = state(i, "exp_avg");
      Tensor exp_inf = state(i, "exp_inf");
      exp_avg.mul_(o.beta1()).add_(g, 1 - o.beta1());
      // The infinity norm: max(beta2 * u, |g| + eps), NaN winning as amax's does.
      exp_inf.copy_(maximum(exp_inf.mul_(o.beta2()), add(abs(g), o.eps())));
      const double clr = o.lr() / (1 - std::pow(o.beta1(), static_cast<double>(step)));
      p.add_(div(exp_avg, exp_inf), -clr);
      write_back(i);
    }
  });
}

}  // namespace locus::optim
