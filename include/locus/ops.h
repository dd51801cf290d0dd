#pragma once
/// \file ops.h
/// Operations as free functions: the elementwise ones (elementwise.h) and the reductions,
/// products, joins and indexing below. Every operation checks first that its tensor operands
/// share one device (a 0-dim CPU tensor may join as a scalar), then dtypes, then shapes, and
/// runs on that device.

#include <optional>
#include <vector>

#include "locus/elementwise.h"
#include "locus/scalar.h"
#include "locus/shape_ops.h"
#include "locus/tensor.h"

namespace locus {

/// {values, indices} of max/min along a dim; unpacks with `auto [v, i] = x.max(1);`.
struct ValuesIndices {
  Tensor values;
  Tensor indices;
};

/// True when shapes match and every element is within atol + rtol*|b| (NaNs unequal). The
/// device rule holds: DeviceMismatchError for tensors on two devices (0-dim CPU ones may join).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
/// True when shapes, dtypes and every element match exactly. The device rule holds, as above.
bool equal(const Tensor& a, const Tensor& b);

// ---- reductions ---------------------------------------------------------------------------
/// Sum of all elements (bool and integer inputs accumulate in int64, as in PyTorch). With
/// `dtype`, each element is converted to it before summing. An empty sum is 0.
Tensor sum(const Tensor& x, std::optional<DType> dtype = std::nullopt);
/// Sum over `dims` (negative counts from the end; empty means all).
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
/// Sum over one dim, as `x.sum(1)` in PyTorch.
Tensor sum(const Tensor& x, int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
/// Mean; floating dtypes only (DTypeError otherwise, as in PyTorch). The mean of nothing is NaN.
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor mean(const Tensor& x, int64_t dim, bool keepdim = false);
/// Largest element (NaN if any is NaN); IndexError on an empty tensor. Bool tensors work.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
/// Largest values along `dim` and their (first) positions; IndexError when that dim is empty.
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
/// Flat index of the first largest (smallest) element (int64, 0-dim); NaN counts as largest
/// and as smallest, as in PyTorch.
Tensor argmax(const Tensor& x);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
/// Numerically stable softmax along `dim` (integer inputs give float32).
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- linear algebra -----------------------------------------------------------------------
/// torch.matmul: dot for 1-D·1-D, matrix-vector, matrix products, and batched products with
/// broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
/// Product of two 2-D tensors.
Tensor mm(const Tensor& a, const Tensor& b);
/// `out = a @ b` for 2-D operands, reusing out's memory.
Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b);

// ---- joining and indexing -----------------------------------------------------------------
/// Concatenates along an existing dim; all on one device, shapes equal off `dim`.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// Stacks along a new dim.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
/// Picks entries along `dim` by an int32/int64 index vector; IndexError for an index outside
/// [0, size) (negative indices too, as in PyTorch).
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
/// out[i][j] = x[index[i][j]][j] for dim 0 (and so on), as torch.gather: an int64 index with as
/// many dims as x, no larger than x off `dim`; IndexError for an index outside [0, size).
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);

/// PyTorch's result_type for tensors and numbers (0-dim tensors and numbers rank below
/// dimensioned tensors of the same category).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

}  // namespace locus
