#pragma once

#include "locus/export.h"
LOCUS_API_BEGIN
// Products beyond matmul and mm: batched, scaled, vector forms and einsum (torch.bmm,
// torch.addmm, torch.einsum, ...), all on the device's matrix-product kernel.

#include <string_view>
#include <vector>

#include "locus/scalar.h"
#include "locus/tensor.h"

namespace locus {

/// torch.bmm: [b, n, m] @ [b, m, p] -> [b, n, p]; both operands 3-D with the same batch size
/// (no broadcasting, as PyTorch), the same dtype, and not bool.
Tensor bmm(const Tensor& self, const Tensor& mat2);

/// torch.addmm: `beta * self + alpha * (mat1 @ mat2)` for 2-D mat1 and mat2, with self
/// broadcast to the result, in one product call. With beta = 0 self is not read (NaN in it
/// does not propagate); integer tensors truncate beta and alpha to integers, as PyTorch does.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1);

/// torch.baddbmm: `beta * self + alpha * bmm(batch1, batch2)`, self broadcast to the result.
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);

/// torch.mv: a 2-D matrix times a 1-D vector of the same dtype.
Tensor mv(const Tensor& self, const Tensor& vec);

/// torch.dot: the inner product of two 1-D tensors of the same length and dtype (0-dim result).
Tensor dot(const Tensor& self, const Tensor& tensor);

/// torch.outer: `self[i] * vec2[j]` for 1-D operands, with type promotion (bool allowed).
Tensor outer(const Tensor& self, const Tensor& vec2);

/// torch.ger: the old name of outer.
Tensor ger(const Tensor& self, const Tensor& vec2);

/// torch.einsum (LibTorch: `torch::einsum("ij,jk->ik", {a, b})`): implicit and explicit (`->`)
/// output, ellipsis `...` with broadcasting, repeated subscripts within an operand (diagonals),
/// summed subscripts, 0-dim operands. Planned as products: operands are contracted left to
/// right (PyTorch 1.13's order), each pair as one bmm. Errors are PyTorch's "einsum(): ..." ones.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors);

}  // namespace locus

LOCUS_API_END
