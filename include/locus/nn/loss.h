#pragma once
/// \file loss.h
/// Loss functions (torch.nn.functional), averaged over the batch.

#include "locus/tensor.h"

namespace locus::nn {

/// mean((input - target)^2). ShapeError when the shapes differ.
Tensor mse_loss(const Tensor& input, const Tensor& target);
/// -mean(log_probs[i, target[i]]) for log-probabilities [N, C] and int64 class indices [N].
/// IndexError for a class outside [0, C); the check reads the targets on the host.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target);
/// nll_loss(log_softmax(logits, 1), target): the classification loss of the tutorials.
Tensor cross_entropy(const Tensor& logits, const Tensor& target);

}  // namespace locus::nn
