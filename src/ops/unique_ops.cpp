// nonzero, argwhere and unique: the ops whose result size depends on the values, so the host
// learns it (a wait on cuda, as in PyTorch). nonzero reads the mask once on the host; unique is
// sort-based: the stable sort, the first element of each run of equal values, a running count.

#include <tuple>

#include "locus/autograd.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/shape_ops.h"
#include "src/ops/index_helpers.h"
#include "src/ops/public_op.h"

namespace locus {

Tensor nonzero(const Tensor& x) {
  const ops::PublicOp op("nonzero", {{x, "self"}});
  NoGradGuard no_grad;  // positions have no gradient
  if (x.numel() == 0) return empty({0, x.dim()}, TensorOptions().dtype(kInt64).device(x.device()));
  const Tensor positions = ops::flat_true_positions(x.dtype() == DType::Bool ? x : ne(x, 0));
  // Flat row-major positions to one column per dim: (p / stride_d) % size_d.
  std::vector<Tensor> columns;
  int64_t stride = 1;
  for (int64_t d = x.dim() - 1; d >= 0; --d) {
    columns.insert(columns.begin(), remainder(div(positions, stride, "floor"), x.size(d)));
    stride *= x.size(d);
  }
  if (columns.empty()) return empty({positions.numel(), 0}, TensorOptions().dtype(kInt64).device(x.device()));
  return stack(columns, 1);
}

Tensor argwhere(const Tensor& x) { return nonzero(x); }

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool /*sorted*/, bool return_inverse, bool return_counts) {
  const ops::PublicOp op("unique", {{x, "self"}});
  NoGradGuard no_grad;  // as PyTorch: unique is not differentiable
  const TensorOptions positions = TensorOptions().dtype(kInt64).device(x.device());
  const Tensor none = empty({0}, positions);
  const int64_t n = x.numel();
  if (n == 0) return {x.reshape({0}).clone(), return_inverse ? empty(x.shape(), positions) : none, return_counts ? none : none};
  const auto [sorted, order] = sort(x.reshape({-1}));
  // The first element of each run of equal values (NaN equals nothing, so each NaN is its own).
  const Tensor first = cat({ones({1}, TensorOptions().dtype(kBool).device(x.device())),
                            ne(sorted.narrow(0, 1, n - 1), sorted.narrow(0, 0, n - 1))});
  const Tensor values = masked_select(sorted, first);
  Tensor inverse = none, counts = none;
  const Tensor run = sub(cumsum(first, 0), 1);  // each sorted element's run
  if (return_inverse) inverse = gather(run, 0, argsort(order)).reshape(x.shape());
  if (return_counts) counts = scatter_add(zeros({values.numel()}, positions), 0, run, ones_like(run));
  return {values, inverse, counts};
}

Tensor Tensor::nonzero() const { return locus::nonzero(*this); }

}  // namespace locus
