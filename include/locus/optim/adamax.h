#pragma once
/// \file adamax.h
/// torch.optim.Adamax.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/optim/optimizer.h"

namespace locus::optim {

/// Options of Adamax (PyTorch's defaults), set by name in any order.
struct AdamaxOptions : AdamFamilyOptions<AdamaxOptions> {
  /// The learning rate, positionally.
  AdamaxOptions(double lr = 2e-3) : AdamFamilyOptions(lr) {}  // NOLINT: implicit, `Adamax(params, 0.1)`
};

/// Adamax (Adam with the infinity norm, Kingma and Ba), as torch.optim.Adamax.
class Adamax : public OptimizerFor<Adamax, AdamaxOptions> {
  LOCUS_OPTIMIZER_HOOKS(AdamaxOptions);
};

}  // namespace locus::optim

LOCUS_API_END
