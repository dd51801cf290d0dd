#pragma once
// In-place ops and views in the graph (Note [In-place ops in the graph] and Note [Views and
// in-place ops] in in_place.cpp). record_in_place and mark_view are declared in node.h.

#include "locus/tensor.h"

namespace locus::autograd {

/// Gives the view `view` a grad_fn that reads its gradient out of its base's current history
/// (AsStridedBackward0): after an in-place op gave the base a new grad_fn.
void refresh_view_history(const Tensor& view);

}  // namespace locus::autograd
