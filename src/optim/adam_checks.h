#pragma once
// The argument checks PyTorch's Adamax, NAdam and RAdam share.

#include "locus/errors.h"
#include "src/optim/py_repr.h"

namespace locus::optim::detail {

/// The argument checks PyTorch's Adamax, NAdam and RAdam share, in its order.
template <typename O>
void check_adam_like(const O& o) {
  if (!(o.lr() >= 0)) throw ValueError("Invalid learning rate: " + py_repr(o.lr()));
  if (!(o.eps() >= 0)) throw ValueError("Invalid epsilon value: " + py_repr(o.eps()));
  if (!(o.beta1() >= 0 && o.beta1() < 1)) throw ValueError("Invalid beta parameter at index 0: " + py_repr(o.beta1()));
  if (!(o.beta2() >= 0 && o.beta2() < 1)) throw ValueError("Invalid beta parameter at index 1: " + py_repr(o.beta2()));
  if (!(o.weight_decay() >= 0)) throw ValueError("Invalid weight_decay value: " + py_repr(o.weight_decay()));
}

}  // namespace locus::optim::detail
