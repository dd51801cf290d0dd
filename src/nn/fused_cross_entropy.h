#pragma once
// cross_entropy with class targets as one kernel pass forward and one backward (Note [Fused
// kernels] in src/ops/fused.h).

#include <optional>

#include "locus/nn/loss.h"
#include "locus/tensor.h"

namespace locus::nn {

/// cross_entropy(logits, target, options) for checked class-index targets, from the device's
/// fused kernels; nullopt when the device has none (or cannot report a bad target to the host
/// at once), and the caller composes log_softmax and nll_loss. IndexError for a target outside
/// [0, C) that is not ignore_index, as the composed form.
std::optional<Tensor> fused_cross_entropy(const Tensor& logits, const Tensor& target, const ClassLossOptions& options);

}  // namespace locus::nn
