#pragma once
// Private pieces shared by the mask, scatter and tensor-indexing front ends (mask_ops.cpp,
// tensor_index.cpp, shape_ops.cpp): the one front end of the Index family's scatters, and
// differentiable forms of index_select and gather.

#include <cstdint>

#include "locus/tensor.h"
#include "src/ops/op_id.h"

namespace locus::ops {

/// The Index-family scatters' one path (Note [Scatter front end]): a copy of `self` with `src`
/// scattered (Scatter), added (ScatterAdd) or index-added (IndexAdd) along `dim` (wrapped).
/// The caller has checked devices, dtypes and shapes; `index` is int64. Records nothing.
Tensor run_scatter(OpId op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);

/// The flat (row-major) positions where the bool tensor `mask` is true, as a 1-D int64 tensor
/// on its device. Reads the mask on the host (a wait on cuda, as PyTorch's nonzero, which is
/// built on it).
Tensor flat_true_positions(const Tensor& mask);

}  // namespace locus::ops
