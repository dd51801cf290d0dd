// SGD: one fused kernel per group, device and dtype where the device has it
// (src/ops/optimizer_step.h), else composed ops.

#include "locus/optim/sgd.h"

#include "locus/ops.h"
#include "src/optim/option_checks.h"
#include "src/optim/param_update.h"

namespace locus::optim {

void SGD::check(const SGDOptions& o) {
  // As PyTorch's checks (of the defaults only).
  detail::check_non_negative(
      {{o.lr(), "learning rate"}, {o.momentum(), "momentum value"}, {o.weight_decay(), "weight_decay value"}});
  if (o.nesterov() && (o.momentum() <= 0 || o.dampening() != 0))
    throw ValueError("Nesterov momentum requires a momentum and zero dampening");
}

void SGD::update(const SGDOptions& o, detail::ParamUpdate& p) {
  ops::OptimizerHyperparameters hyper;
  hyper.kind = ops::OptimizerKind::Sgd;
  hyper.lr = o.lr(), hyper.weight_decay = o.weight_decay();
  hyper.momentum = o.momentum(), hyper.dampening = o.dampening(), hyper.nesterov = o.nesterov();
  const bool with_buffer = o.momentum() != 0;
  const bool fresh = with_buffer && !has_state(p.index, "momentum_buffer");
  const Tensor buf = with_buffer ? state(p.index, "momentum_buffer") : Tensor();
  if (p.fuse(0, hyper, buf, Tensor(), fresh)) return;
  // Composed: the same arithmetic as the fused kernel, op by op.
  Tensor g = p.grad;
  if (o.weight_decay() != 0) g = add(g, p.param, o.weight_decay());
  if (with_buffer) {
    Tensor b = buf;
    if (fresh)
      b.copy_(g);
    else
      b.mul_(o.momentum()).add_(g, 1 - o.dampening());
    g = o.nesterov() ? add(g, b, o.momentum()) : b;
  }
  p.param.add_(g, -o.lr());
}

}  // namespace locus::optim
