// RMSprop, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_rmsprop).

#include "locus/optim/rmsprop.h"

#include "locus/ops.h"
#include "src/optim/option_checks.h"
#include "src/optim/param_update.h"

namespace locus::optim {

void RMSprop::check(const RMSpropOptions& o) {
  // As PyTorch's checks (of the defaults only, in its order).
  detail::check_non_negative({{o.lr(), "learning rate"}, {o.eps(), "epsilon value"}, {o.momentum(), "momentum value"},
                              {o.weight_decay(), "weight_decay value"}, {o.alpha(), "alpha value"}});
}

void RMSprop::update(const RMSpropOptions& o, detail::ParamUpdate& p) {
  const size_t i = p.index;
  ++param_step(i);
  Tensor g = p.grad;
  if (o.weight_decay() != 0) g = add(g, p.param, o.weight_decay());
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
    p.param.add_(buf, -o.lr());
  } else {
    p.param.add_(div(g, avg), -o.lr());
  }
}

}  // namespace locus::optim
