#pragma once
/// \file shape_ops.h
/// Shape ops, masks, scatters and gathers along a dim, with PyTorch 1.13's semantics: views
/// where PyTorch returns views (chunk, split, unbind, diagonal, movedim, swapaxes, unflatten,
/// meshgrid), copies where it copies. The methods of the same names are in tensor.h, and
/// tensor indexing (`x.index({Slice(), 0})`) in indexing.h. docs/api.md, "Shapes, masks and
/// indexing", maps each PyTorch spelling to these.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "locus/scalar.h"
#include "locus/tensor.h"

namespace locus {

/// `chunks` views along `dim` of size ceil(n / chunks) (the last smaller; fewer when n is small).
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
/// Views of `split_size` elements along `dim` (the last may be smaller).
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
/// Views of the given sizes along `dim`; they must add up to its size.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& split_sizes, int64_t dim = 0);
/// Every position along `dim` as a view without that dim.
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
/// Each element repeated `repeats` times along `dim` (over the flattened tensor without one).
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt);
/// Element i repeated `repeats[i]` times (a 1-D int64 tensor, or one element for all).
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt);
/// `torch.repeat_interleave(repeats)`: index i repeated repeats[i] times.
Tensor repeat_interleave(const Tensor& repeats);
/// The elements in reverse order along each of `dims` (a copy).
Tensor flip(const Tensor& x, const Shape& dims);
/// Rotates the elements by `shifts[i]` along `dims[i]`; with no dims, over the flattened tensor.
Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims = {});
/// The lower triangle of the last two dims (elements with column - row <= diagonal), zeros elsewhere.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
/// The upper triangle of the last two dims (column - row >= diagonal), zeros elsewhere.
Tensor triu(const Tensor& x, int64_t diagonal = 0);
/// A 1-D tensor becomes a square matrix with it on `diagonal`; a matrix gives that diagonal (a copy).
Tensor diag(const Tensor& x, int64_t diagonal = 0);
/// A view of the diagonal `offset` of dims dim1 and dim2, as the last dim.
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
/// A view with dims `source` moved to positions `destination`, the others in order.
Tensor movedim(const Tensor& x, const Shape& source, const Shape& destination);
/// A view with dim `source` moved to position `destination`.
Tensor movedim(const Tensor& x, int64_t source, int64_t destination);
/// NumPy's name for transpose.
Tensor swapaxes(const Tensor& x, int64_t axis0, int64_t axis1);
/// Another name for transpose.
Tensor swapdims(const Tensor& x, int64_t dim0, int64_t dim1);
/// Dim `dim` split into `sizes` (one may be -1).
Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes);
/// Coordinate grids of 0-dim or 1-D tensors, as expanded views; indexing "ij" (the default,
/// matrix order) or "xy" (the first two dims swapped). Other strings: ValueError.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij");

/// x with `value` where `mask` (bool) is true; mask and x broadcast together.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);
/// The same with a 0-dim tensor as the value (it receives a gradient).
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);
/// The elements of x where `mask` is true, as a 1-D tensor (x and mask broadcast together).
Tensor masked_select(const Tensor& x, const Tensor& mask);
/// A copy of x with the positions where `mask` is true filled from `source`'s elements in order.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
/// A copy of x with `out[..index[i][j]..] = src[i][j]` along `dim` (duplicates: one of them wins).
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
/// The same with one value for every indexed position.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
/// A copy of x with src added at the indexed positions along `dim` (repeats add up; deterministic
/// on the CPU, atomic adds on CUDA).
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
/// A copy of x with `alpha * source` added at positions `index` (1-D) along `dim`.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
/// `gather` with the index broadcast against x off `dim`; without a dim, over the flattened x.
Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
/// `x.index_put(indices, values, accumulate)` as a function (a copy of x).
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);

}  // namespace locus

LOCUS_API_END
