#pragma once
/// \file radam.h
/// torch.optim.RAdam.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of RAdam (PyTorch's defaults), set by name in any order.
struct RAdamOptions : AdamFamilyOptions<RAdamOptions> {
  /// The learning rate, positionally.
  RAdamOptions(double lr = 1e-3) : AdamFamilyOptions(lr) {}  // NOLINT: implicit, `RAdam(params, 0.1)`
};

/// RAdam (rectified Adam, Liu et al.), as torch.optim.RAdam: plain momentum SGD until the variance
/// estimate is tractable.
class RAdam : public OptimizerFor<RAdam, RAdamOptions> {
  LOCUS_OPTIMIZER_HOOKS(RAdamOptions);
};

}  // namespace locus::optim

LOCUS_API_END
