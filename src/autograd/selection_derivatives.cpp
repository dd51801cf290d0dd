// Backward of the Sort family (sort, topk, kthvalue, median) and of the scans (cumsum, cumprod).

#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"

namespace locus::autograd {
namespace {

Tensor as(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

// sum_{j >= i} g_j along `dim`: the total minus the running sum before i.
Tensor reverse_cumsum(const Tensor& g, int64_t dim) { return sum(g, Shape{dim}, true) - cumsum(g, dim) + g; }

}  // namespace

void record_selection(const Tensor& x, int64_t dim, bool whole, const Tensor& values, const Tensor& indices) {
  const Tensor I = indices.detach();
  const Shape sx = x.shape();
  const DType dx = x.dtype();
  const int64_t n = x.dim() ? x.size(dim) : 1;
  record(values, whole ? "SortBackward0" : "TopkBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    if (sx.empty()) return {as(g, dx)};
    if (whole) return {as(gather(g, dim, argsort(I, dim)), dx)};  // the inverse permutation
    // k < n positions: each element of x collects the gradients of the outputs that took it.
    Tensor gk = g, ik = I;
    if (g.dim() < static_cast<int64_t>(sx.size())) gk = g.unsqueeze(dim), ik = I.unsqueeze(dim);
    const Tensor gl = gk.transpose(dim, -1).unsqueeze(-1), il = ik.transpose(dim, -1).unsqueeze(-1);
    const Tensor positions = arange(n, TensorOptions().device(g.device()));
    const Tensor picked = (eq(il, positions)).to(g.dtype());
    return {as(sum(picked * gl, Shape{-2}).transpose(dim, -1).contiguous(), dx)};
  }, {&x}, {{I, indices}});
}

void record_scan(bool prod, const Tensor& x, int64_t dim, const Tensor& out) {
  const Tensor X = prod ? as(x.detach(), out.dtype()) : Tensor(), Y = prod ? out.detach() : Tensor();
  const DType dx = x.dtype();
  record(out, prod ? "CumprodBackward0" : "CumsumBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    if (!prod) return {as(reverse_cumsum(g, dim), dx)};
    // dy_i/dx_k = prod_{j <= i, j != k} x_j. Before a row's first zero z that is y_i / x_k; at z
    // it is L_z * prod_{z < j <= i} x_j (L_z the product before z); after z it is 0.
    const Tensor is_zero = eq(X, 0);
    const Tensor zeros_so_far = cumsum(is_zero.to(X.dtype()), dim);
    const Tensor before_first = eq(zeros_so_far, 0);
    const Tensor first_zero = logical_and(is_zero, eq(zeros_so_far, 1));
    const Tensor plain = reverse_cumsum(g * Y, dim) / where(is_zero, ones_like(X), X);
    const Tensor from_first = logical_not(before_first);
    const Tensor after_product = cumprod(where(logical_and(from_first, logical_not(first_zero)), X, ones_like(X)), dim);
    const Tensor tail = sum(g * after_product * from_first.to(X.dtype()), Shape{dim}, true);
    const Tensor before_product = cumprod(where(before_first, X, ones_like(X)), dim);
    const Tensor at_first = before_product * tail;
    return {as(where(before_first, plain, where(first_zero, at_first, zeros_like(plain))), dx)};
  }, {&x}, {{X, x}, {Y, out}});
}

}  // namespace locus::autograd
