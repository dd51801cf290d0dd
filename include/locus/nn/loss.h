#pragma once
/// \file loss.h
/// The reduction every loss takes, and the class losses' options (the functions: nn_ops.h at
/// the top level, nn::functional in functional.h).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus::nn {

/// How a loss folds its per-element values: their mean, their sum, or none (the values).
enum class Reduction { Mean, Sum, None };

/// Options of the NLLLoss and CrossEntropyLoss modules, set by name in any order:
/// `ClassLossOptions().ignore_index(0).reduction(Reduction::Sum)`.
struct ClassLossOptions {
  /// Both options at once, in this order (`ClassLossOptions(Reduction::Sum)`).
  ClassLossOptions(Reduction reduction = Reduction::Mean, int64_t ignore_index = -100)
      : reduction_(reduction), ignore_index_(ignore_index) {}
  /// How the per-target losses are folded.
  LOCUS_ARG(Reduction, reduction);
  /// Targets equal to this class contribute nothing, and the mean is over the others (as
  /// PyTorch: -100 by default, so padding can be marked without a mask).
  LOCUS_ARG(int64_t, ignore_index);
};

}  // namespace locus::nn

LOCUS_API_END
