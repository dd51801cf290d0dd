#pragma once
// What the elementwise losses share: their reduction and their argument checks, raised under the
// loss's own name (Note [Public op names]).

#include <string>

#include "locus/nn/loss.h"
#include "locus/tensor.h"

namespace locus::nn::loss_checks {

/// The mean, the sum, or the losses themselves.
Tensor reduce_loss(const Tensor& losses, Reduction reduction);

/// ShapeError unless input and target have one shape (Note [Losses do not broadcast] in
/// src/nn/loss.cpp), worded as PyTorch's "Using a target size ... that is different to the input
/// size ..."; `loss` names the function.
void check_same_shape(const char* loss, const Tensor& input, const Tensor& target);

/// The floating dtype input and target are computed in (PyTorch's result_type); DTypeError when
/// neither is floating.
DType floating_common_dtype(const char* loss, const Tensor& input, const Tensor& target);

/// DTypeError unless `t` has dtype `dtype`; `what` names the argument ("weight").
void check_dtype(const char* loss, const char* what, const Tensor& t, DType dtype);

/// ShapeError unless `t` broadcasts to `shape` without growing it (a weight against the losses);
/// `what` names the argument.
void check_broadcasts_to(const char* loss, const char* what, const Tensor& t, const Shape& shape);

}  // namespace locus::nn::loss_checks
