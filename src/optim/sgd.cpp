// SGD: one fused kernel per group, device and dtype where the device has it
// (src/ops/optimizer_step.h), else composed ops.

#include "locus/optim/sgd.h"

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/ops/optimizer_step.h"
#include "src/optim/py_repr.h"

namespace locus::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions o) : Optimizer(std::move(param_groups), o.clone()) {
  // As PyTorch's checks (of the defaults only), written so that NaN fails them too.
  using detail::py_repr;
  if (!(o.lr() >= 0)) throw ValueError("Invalid learning rate: " + py_repr(o.lr()));
  if (!(o.momentum() >= 0)) throw ValueError("Invalid momentum value: " + py_repr(o.momentum()));
  if (!(o.weight_decay() >= 0)) throw ValueError("Invalid weight_decay value: " + py_repr(o.weight_decay()));
  if (o.nesterov() && (o.momentum() <= 0 || o.dampening() != 0))
    throw ValueError("Nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  for_each_group<SGDOptions>([&](const SGDOptions& o, size_t first, size_t last) {
    ops::OptimizerHyperparameters hyper;
    hyper.kind = ops::OptimizerKind::Sgd;
    hyper.lr = o.lr(), hyper.weight_decay = o.weight_decay();
    hyper.momentum = o.momentum(), hyper.dampening = o.dampening(), hyper.nesterov = o.nesterov();
    ops::FusedUpdate fused(hyper);
    for (size_t i = first; i < last; ++i) {
      Tensor g = gradient(i);
      if (!g.defined()) continue;
      Tensor p = updated(i);
      const bool with_buffer = o.momentum() != 0;
      const bool fresh = with_buffer && !has_state(i, "momentum_buffer");
      const Tensor buf = with_buffer ? state(i, "momentum_buffer") : Tensor();
      if (fused.add(i, p, g, buf, Tensor(), fresh)) continue;
      // Composed: the same arithmetic as the fused kernel, op by op.
      if (o.weight_decay() != 0) g = add(g, p, o.weight_decay());
      if (with_buffer) {
        Tensor b = buf;
        if (fresh)
          b.copy_(g);
        else
          b.mul_(o.momentum()).add_(g, 1 - o.dampening());
        g = o.nesterov() ? add(g, b, o.momentum()) : b;
      }
      p.add_(g, -o.lr());
      write_back(i);
    }
    for (size_t i : fused.run()) write_back(i);
  });
}

}  // namespace locus::optim
