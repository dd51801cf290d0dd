#pragma once
/// \file ops.h
/// Operations as free functions: the elementwise ones (elementwise.h) and the reductions,
/// products, joins and indexing below. Every operation checks first that its tensor operands
/// share one device (a 0-dim CPU tensor may join as a scalar), then dtypes, then shapes, and
/// runs on that device.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <initializer_list>
#include <optional>
#include <tuple>
#include <vector>

#include "locus/elementwise.h"
#include "locus/products.h"
#include "locus/random.h"
#include "locus/scalar.h"
#include "locus/shape_ops.h"
#include "locus/tensor.h"

namespace locus {

/// {values, indices} of max/min along a dim; unpacks with `auto [v, i] = x.max(1);`.
struct ValuesIndices {
  Tensor values;
  Tensor indices;
};

/// torch.allclose: true when every element of a and b, broadcast together, is close: equal
/// (infinities of one sign included), or both finite with |a - b| <= atol + rtol * |b|; NaNs
/// only with `equal_nan`. DTypeError when the dtypes differ ("float32 did not match float64"),
/// ShapeError when the shapes do not broadcast, ValueError for a negative rtol or atol. The
/// device rule holds: DeviceMismatchError for tensors on two devices (0-dim CPU ones may join).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// torch.equal: true when the shapes match and every element equals (in the dtype both promote
/// to, so an int64 1 equals a float32 1; NaN equals nothing). The device rule holds, as above.
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
/// Product of all elements (integer and bool inputs multiply in int64, as sum); with `dtype`,
/// each element is converted first. The product of nothing is 1.
Tensor prod(const Tensor& x, std::optional<DType> dtype = std::nullopt);
/// Product along one dim, as `x.prod(1)` in PyTorch.
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
/// Largest element over `dims` (empty: all), NaN if any is; as torch.amax, the gradient is shared
/// evenly among the elements equal to the result. IndexError for an empty reduced slice.
Tensor amax(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
Tensor amax(const Tensor& x, int64_t dim, bool keepdim = false);
/// Smallest element over `dims` (empty: all), as amax.
Tensor amin(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, int64_t dim, bool keepdim = false);
/// log(sum(exp(x))) over `dims`, in one pass that never overflows; integer inputs give the
/// default float. An empty slice gives -inf.
Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim = false);
Tensor logsumexp(const Tensor& x, int64_t dim, bool keepdim = false);
/// The vector p-norm of all elements (floating dtypes only): (sum |x|^p)^(1/p); p = inf gives
/// max |x|, -inf min |x|, 0 the count of nonzeros. `norm(x)` is the 2-norm.
Tensor norm(const Tensor& x, const Scalar& p = 2);
/// The p-norm over `dims` (empty: all).
Tensor norm(const Tensor& x, const Scalar& p, const Shape& dims, bool keepdim = false);
/// `norm(x, "fro", dims)`: the Frobenius norm (the 2-norm of the elements). ValueError for any
/// other string ("nuc" and the matrix norms are not here).
Tensor norm(const Tensor& x, const char* p, const Shape& dims = {}, bool keepdim = false);
/// Variance over all elements (floating dtypes only), with Bessel's correction when `unbiased`.
/// Welford's one-pass algorithm: no cancellation for data far from 0. One element with the
/// correction gives NaN, as PyTorch.
Tensor var(const Tensor& x, bool unbiased = true);
/// Variance over `dims` (empty: all).
Tensor var(const Tensor& x, const Shape& dims, bool unbiased = true, bool keepdim = false);
/// `var(x, {1})`: a braced list of dims would otherwise pick the `unbiased` overload ({1} is a
/// valid bool); a std::initializer_list parameter wins over it. The same holds for std,
/// var_mean and std_mean and the methods.
Tensor var(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased = true, bool keepdim = false);
/// Variance with an explicit correction (the divisor is count - correction; 1 when nullopt), as
/// PyTorch's `var(x, dim, correction=0)`. Pass it as `std::optional<int64_t>(0)`: a plain `0`
/// picks the `unbiased` overload, as in LibTorch.
Tensor var(const Tensor& x, const std::optional<Shape>& dims, std::optional<int64_t> correction, bool keepdim = false);
/// Standard deviation: the square root of var, with the same overloads.
Tensor std(const Tensor& x, bool unbiased = true);
Tensor std(const Tensor& x, const Shape& dims, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, const std::optional<Shape>& dims, std::optional<int64_t> correction, bool keepdim = false);
/// {var, mean} in one call, as torch.var_mean (`auto [v, m] = var_mean(x, {1});`).
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, bool unbiased = true);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const Shape& dims, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased = true,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const std::optional<Shape>& dims, std::optional<int64_t> correction,
                                    bool keepdim = false);
/// {std, mean} in one call, as torch.std_mean.
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, bool unbiased = true);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, const Shape& dims, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased = true,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, const std::optional<Shape>& dims, std::optional<int64_t> correction,
                                    bool keepdim = false);
/// Whether any element is nonzero (NaN counts): bool, or uint8 for a uint8 input (as PyTorch).
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
/// Whether every element is nonzero, as any.
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
/// The number of nonzero elements over `dims` (empty: all), int64.
Tensor count_nonzero(const Tensor& x, const Shape& dims = {});
Tensor count_nonzero(const Tensor& x, int64_t dim);

// ---- sorting, selection and scans -------------------------------------------------------
/// Sorts along `dim` (the last by default): {values, indices}, `auto [v, i] = sort(x, 1);`. Always
/// stable (equal elements keep their order); NaN ranks above every number, as PyTorch.
ValuesIndices sort(const Tensor& x, int64_t dim = -1, bool descending = false);
/// LibTorch's spelling with `stable` first, `sort(x, /*stable=*/true, 1)`; Locus's sort is
/// stable either way.
ValuesIndices sort(const Tensor& x, bool stable, int64_t dim = -1, bool descending = false);
/// `sort(x, 1)` with an int literal, which would otherwise convert as well to `stable` as to `dim`.
inline ValuesIndices sort(const Tensor& x, int dim, bool descending = false) { return sort(x, int64_t{dim}, descending); }
/// The positions that sort `x` along `dim` (stable).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
/// LibTorch's spelling with `stable` first.
Tensor argsort(const Tensor& x, bool stable, int64_t dim = -1, bool descending = false);
/// `argsort(x, 1)` with an int literal (as sort's).
inline Tensor argsort(const Tensor& x, int dim, bool descending = false) { return argsort(x, int64_t{dim}, descending); }
/// The k largest (smallest with largest = false) elements along `dim` and their positions,
/// in order; ties resolve to the earlier position, so the result is the stable sort's first k.
/// IndexError for k outside [0, size].
ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
/// The k-th smallest element along `dim` (k counts from 1) and its position.
ValuesIndices kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);
/// The lower median of all elements (NaN if any is NaN, as PyTorch); IndexError when empty.
Tensor median(const Tensor& x);
/// The lower median along `dim` and its position (a row with NaN gives its first NaN).
ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim = false);
/// The positions of the nonzero elements, one row each ([n, x.dim()] int64, row-major order).
/// The count decides the shape, so the host reads the mask (a wait on cuda, as in PyTorch).
Tensor nonzero(const Tensor& x);
/// torch.argwhere: the same as nonzero.
Tensor argwhere(const Tensor& x);
/// torch.unique over all elements: {values (sorted ascending), inverse (x's shape: each
/// element's position in values, when return_inverse), counts (when return_counts)}; the ones not
/// asked for are empty, as LibTorch's _unique2. Always sorted; each NaN is its own value.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false);
/// Running sum along `dim`; integers and bool accumulate in int64 (as PyTorch), or `dtype`.
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
/// Running product along `dim`, as cumsum; its gradient is exact where elements are zero.
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

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

LOCUS_API_END
