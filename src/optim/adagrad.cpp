// Adagrad, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_adagrad).

#include "locus/optim/adagrad.h"

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/optim/py_repr.h"

namespace locus::optim {

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions o)
    : Optimizer(std::move(param_groups), o.clone()) {
  // As PyTorch's checks (of the defaults only, in its order), written so that NaN fails them.
  using detail::py_repr;
  if (!(o.lr() >= 0)) throw ValueError("Invalid learning rate: " + py_repr(o.lr()));
  if (!(o.lr_decay() >= 0)) throw ValueError("Invalid lr_decay value: " + py_repr(o.lr_decay()));
  if (!(o.weight_decay() >= 0)) throw ValueError("Invalid weight_decay value: " + py_repr(o.weight_decay()));
  if (!(o.initial_accumulator_value() >= 0))
    throw ValueError("Invalid initial_accumulator_value value: " + py_repr(o.initial_accumulator_value()));
  if (!(o.eps() >= 0)) throw ValueError("Invalid epsilon value: " + py_repr(o.eps()));
}

void Adagrad::step() {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  for_each_group<AdagradOptions>([&](const AdagradOptions& o, size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      Tensor g = gradient(i);
      if (!g.defined()) continue;
      Tensor p = updated(i);
      // PyTorch fills the sum when the optimizer is built; here when the parameter first steps
      // (the same value, and a group added later gets its sum too).
      const bool fresh = !has_state(i, "sum");
      Tensor sum = state(i, "sum");
      if (fresh) sum.fill_(o.initial_accumulator_value());
      const int64_t step = ++param_step(i);
      if (o.weight_decay() != 0) g = add(g, p, o.weight_decay());
      const double clr = o.lr() / (1 + static_cast<double>(step - 1) * o.lr_decay());
      sum.add_(mul(g, g));
      const Tensor std = sqrt(sum).add_(o.eps());
      p.add_(div(g, std), -clr);
      write_back(i);
    }
  });
}

}  // namespace locus::optim
