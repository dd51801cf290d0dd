// Adagrad, composed from in-place tensor ops in PyTorch 1.13's order (_single_tensor_adagrad).

#include "locus/optim/adagrad.h"

#include "locus/ops.h"
#include "src/optim/option_checks.h"
#include "src/optim/param_update.h"

namespace locus::optim {

void Adagrad::check(const AdagradOptions& o) {
  // As PyTorch's checks (of the defaults only, in its order).
  detail::check_non_negative({{o.lr(), "learning rate"}, {o.lr_decay(), "lr_decay value"},
                              {o.weight_decay(), "weight_decay value"},
                              {o.initial_accumulator_value(), "initial_accumulator_value value"},
                              {o.eps(), "epsilon value"}});
}

void Adagrad::update(const AdagradOptions& o, detail::ParamUpdate& p) {
  // PyTorch fills the sum when the optimizer is built; here when the parameter first steps
  // (the same value, and a group added later gets its sum too).
  const bool fresh = !has_state(p.index, "sum");
  Tensor sum = state(p.index, "sum");
  if (fresh) sum.fill_(o.initial_accumulator_value());
  const int64_t step = ++param_step(p.index);
  Tensor g = p.grad;
  if (o.weight_decay() != 0) g = add(g, p.param, o.weight_decay());
  const double clr = o.lr() / (1 + static_cast<double>(step - 1) * o.lr_decay());
  sum.add_(mul(g, g));
  const Tensor std = sqrt(sum).add_(o.eps());
  p.param.add_(div(g, std), -clr);
}

}  // namespace locus::optim
