#pragma once
// cross_entropy with class targets as one kernel pass forward and one backward (Note [Fused
// kernels] in src/ops/fused.h).

#include <functional>
#include <optional>

#include "locus/nn/loss.h"
#include "locus/tensor.h"

namespace locus::ops {

/// cross_entropy(logits, target) without class weights or smoothing, for checked class-index
/// targets, from the device's fused kernels (CrossEntropyLossBackward0); nullopt when the device
/// has none (or cannot report a bad target to the host at once), and nn::cross_entropy composes
/// log_softmax and nll_loss. IndexError for a target outside [0, C) that is not
/// `ignore_index`, as the composed form. `composed` computes the same loss from the logits
/// through that composition: the node's double backward (Note [Double backward]).
std::optional<Tensor> fused_cross_entropy(const Tensor& logits, const Tensor& target, nn::Reduction reduction,
                                          int64_t ignore_index, std::function<Tensor(const Tensor&)> composed);

}  // namespace locus::ops
