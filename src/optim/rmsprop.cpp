// RMSprop, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_rmsprop).

#include "locus/optim/rmsprop.h"

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/optim/py_repr.h"

namespace locus::optim {

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions o)
    : Optimizer(std::move(param_groups), o.clone()) {
  // As PyTorch's checks (of the defaults only, in its order), written so that NaN fails them.
  using detail::py_repr;
  if (!(o.lr() >= 0)) throw ValueError("Invalid learning rate: " + py_repr(o.lr()));
  if (!(o.eps() >= 0)) throw ValueError("Invalid epsilon value: " + py_repr(o.eps()));
  if (!(o.momentum() >= 0)) throw ValueError("Invalid momentum value: " + py_repr(o.momentum()));
  if (!(o.weight_decay() >= 0)) throw ValueError("Invalid weight_decay value: " + py_repr(o.weight_decay()));
  if (!(o.alpha() >= 0)) throw ValueError("Invalid alpha value: " + py_repr(o.alpha()));
}

void RMSprop::step() {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  for_each_group<RMSpropOptions>([&](const RMSpropOptions& o, size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      Tensor g = gradient(i);
      if (!g.defined()) continue;
      Tensor p = updated(i);
      ++param_step(i);
      if (o.weight_decay() != 0) g = add(g, p, o.weight_decay());
      Tensor square_avg = state(i, "square_avg");
      square_avg.mul_(o.alpha()).add_(mul(g, g), 1 - o.alpha());
      Tensor avg;
      if (o.centered()) {
        Tensor grad_avg = state(i, "grad_avg");
        grad_avg.mul_(o.alpha()).add_(g, 1 - o.alpha());
        avg = sub(square_avg, mul(grad_avg, grad_avg)).sqrt_();
      } else {
        avg = sqrt(square_avg);
      }
      avg.add_(o.eps());
      if (o.momentum() > 0) {
        Tensor buf = state(i, "momentum_buffer");
        buf.mul_(o.momentum()).add_(div(g, avg));
        p.add_(buf, -o.lr());
      } else {
        p.add_(div(g, avg), -o.lr());
      }
      write_back(i);
    }
  });
}

}  // namespace locus::optim
