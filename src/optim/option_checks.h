#pragma once
// The optimizers' argument checks, with PyTorch's messages ("Invalid learning rate: -1.0"),
// written so that NaN fails them too.

#include <initializer_list>
#include <string>
#include <utility>

#include "locus/errors.h"
#include "src/optim/py_repr.h"

namespace locus::optim::detail {

/// ValueError "Invalid <what>: <repr(value)>" unless value >= 0 (NaN fails).
inline void check_non_negative(double value, const char* what) {
  if (!(value >= 0)) throw ValueError(std::string("Invalid ") + what + ": " + py_repr(value));
}

/// check_non_negative(value, what) for each pair, in order.
inline void check_non_negative(std::initializer_list<std::pair<double, const char*>> checks) {
  for (const auto& [value, what] : checks) check_non_negative(value, what);
}

/// ValueError "Invalid beta parameter at index <index>: <repr(beta)>" unless 0 <= beta < 1.
inline void check_beta(double beta, int index) {
  if (!(beta >= 0 && beta < 1))
    throw ValueError("Invalid beta parameter at index " + std::to_string(index) + ": " + py_repr(beta));
}

/// The argument checks PyTorch's Adam, AdamW, Adamax, NAdam and RAdam share, in its order.
template <typename O>
void check_adam_like(const O& o) {
  check_non_negative({{o.lr(), "learning rate"}, {o.eps(), "epsilon value"}});
  check_beta(o.beta1(), 0);
  check_beta(o.beta2(), 1);
  check_non_negative(o.weight_decay(), "weight_decay value");
}

}  // namespace locus::optim::detail
