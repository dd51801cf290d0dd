#pragma once
/// \file ops.h
/// Operations as free functions. Every operation checks first that its tensor operands share
/// one device (a 0-dim CPU tensor may join as a scalar), then dtypes, then shapes, and runs on
/// that device. Binary ops broadcast as in PyTorch and promote dtypes by PyTorch's rules.

#include <optional>
#include <vector>

#include "locus/scalar.h"
#include "locus/tensor.h"

namespace locus {

/// {values, indices} of max/min along a dim; unpacks with `auto [v, i] = x.max(1);`.
struct ValuesIndices {
  Tensor values;
  Tensor indices;
};

// ---- arithmetic (alpha scales the second operand, as in torch.add) -----------------------
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
/// True division: integer operands give float32.
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
/// Writes `a + alpha*b` into `out` (resized if its numel differs, never re-typed or moved).
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);

// ---- elementwise functions (integer inputs give float32) ---------------------------------
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
/// Exact GELU: x * Phi(x) with the error function, PyTorch's default.
Tensor gelu(const Tensor& x);
/// Limits to [min, max]; either bound may be absent (not both: ValueError).
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor& relu_out(Tensor& out, const Tensor& x);

// ---- comparisons (bool results) ----------------------------------------------------------
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Scalar& b);
/// `condition ? a : b` elementwise; condition must be bool. All three broadcast.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
/// True when shapes match and every element is within atol + rtol*|b| (NaNs unequal).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
/// True when shapes, dtypes and every element match exactly.
bool equal(const Tensor& a, const Tensor& b);

// ---- reductions ---------------------------------------------------------------------------
/// Sum of all elements (bool and integer inputs accumulate in int64, as in PyTorch).
Tensor sum(const Tensor& x, std::optional<DType> dtype = std::nullopt);
/// Sum over `dims` (negative counts from the end; empty means all).
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
/// Mean; floating dtypes only (DTypeError otherwise, as in PyTorch).
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const Shape& dims, bool keepdim = false);
/// Largest element (NaN if any is NaN); ValueError on an empty tensor.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
/// Flat index of the first largest element (int64, 0-dim).
Tensor argmax(const Tensor& x);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
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
/// Picks entries along `dim` by an int32/int64 index vector; IndexError when out of range.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
/// out[i][j] = x[index[i][j]][j] for dim 0 (and so on), as torch.gather.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);

// ---- operators ----------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Scalar& b);
/// Elementwise comparisons returning bool tensors, as in LibTorch.
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);

/// PyTorch's result_type for tensors and numbers (0-dim tensors and numbers rank below
/// dimensioned tensors of the same category).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

}  // namespace locus
