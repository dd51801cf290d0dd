#pragma once

#include "locus/export.h"
LOCUS_API_BEGIN
// Random sampling beyond rand / randn / randint (factories.h): permutations, Bernoulli and
// multinomial draws, normal with a mean and std. All draw from the one generator manual_seed
// sets, with counter-based Philox streams, so a seed gives the same values on every device.

#include <cstdint>

#include "locus/tensor.h"
#include "locus/tensor_options.h"

namespace locus {

/// torch.randperm: a random permutation of 0..n-1 (int64 unless options say otherwise; bool
/// is refused, and an integer dtype must hold n - 1).
Tensor randperm(int64_t n, TensorOptions options = {});

/// torch.bernoulli(p): 1 with probability p[i], else 0, in p's (floating) dtype and device.
/// Every p must lie in [0, 1].
Tensor bernoulli(const Tensor& p);

/// torch.bernoulli(input, p): a tensor like `input` (any dtype) with 1 at probability p.
Tensor bernoulli(const Tensor& input, double p);

/// torch.multinomial: `num_samples` category indices (int64) per row of a 1-D or 2-D tensor of
/// non-negative weights (floating, finite, not all zero), drawn with or without replacement.
/// Without replacement a row's samples are distinct (weights as PyTorch: p / Exp(1) keys).
Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement = false);

/// torch.normal(mean, std, size): normal values of a floating dtype (std >= 0).
Tensor normal(double mean, double std, const Shape& size, TensorOptions options = {});

/// torch.normal(mean, std) with tensors: one draw per element of the broadcast of both, each
/// with its own mean and std (std >= 0). Not differentiable (PyTorch's gradient is zero).
Tensor normal(const Tensor& mean, const Tensor& std);

}  // namespace locus

LOCUS_API_END
