// The backward of every reduction of the op table (LOCUS_REDUCE_OPS), generated from its
// derivative column. The output's gradient and the output come back with the reduced dims kept
// as size 1, so each expression broadcasts against the input; the result is expanded to the
// input's shape and converted to its dtype.

#include <cmath>
#include <string>

#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"

namespace locus::autograd {
namespace {

using ops::OpId;

// ---- helpers the table's expressions use --------------------------------------------------

// d prod / d x_i = the product of the others: y / x_i where x_i != 0. Where the slice holds one
// zero, that element's gradient is the product of the nonzero others, and every other gradient
// is 0 (y is 0); with two zeros or more every gradient is 0.
Tensor prod_backward(const Tensor& g, const Tensor& x, const Tensor& y, const Shape& red) {
  const Tensor nonzero = x != 0;
  const Tensor zeros_in_slice = sum(logical_not(nonzero), red, /*keepdim=*/true);
  const Tensor others = prod_of_nonzero(x, red);
  const Tensor at_nonzero = g * y / where(nonzero, x, ones_like(x));
  const Tensor at_zero = where(zeros_in_slice == 1, g * others, zeros_like(at_nonzero));
  return where(nonzero, at_nonzero, at_zero);
}

// amax / amin: the gradient is shared evenly among the elements equal to the result (as
// PyTorch's amax_backward).
Tensor evenly_among_equal(const Tensor& x, const Tensor& y, const Shape& red) {
  const Tensor hit = (x == y).to(x.dtype());
  return hit / sum(hit, red, /*keepdim=*/true);
}

// d ||x||_p / dx: sign(x) |x|^(p-1) / y^(p-1); for p = 2 x / y, p = 1 sign(x), p = +-inf the
// gradient shared among the elements whose |x| is the result, p = 0 none. 0 where y is 0.
Tensor norm_backward(const Tensor& g, const Tensor& x, const Tensor& y, double p, const Shape& red) {
  if (p == 0) return zeros_like(x);
  if (p == 1) return g * sign(x);
  if (std::isinf(p)) return g * sign(x) * evenly_among_equal(abs(x), y, red);
  const Tensor safe_y = where(y == 0, ones_like(y), y);
  const Tensor d = p == 2 ? x / safe_y : sign(x) * pow(abs(x), p - 1) / pow(safe_y, p - 1);
  return where(y == 0, zeros_like(d), g * d);
}

// d var / dx = 2 (x - mean) / (count - correction).
Tensor var_backward(const Tensor& g, const Tensor& x, const Shape& red, int64_t correction) {
  int64_t count = 1;
  for (int64_t d : red) count *= x.size(d);
  const double divisor = static_cast<double>(std::max<int64_t>(count - correction, 0));
  return g * (x - mean(x, red, /*keepdim=*/true)) * (2.0 / divisor);
}

#define NO_GRAD Tensor()

// One backward per reduction: g, x, y as described above, in the output's dtype.
using ReduceBackward = Tensor (*)(const Tensor& g, const Tensor& x, const Tensor& y, double n, const Shape& red,
                                  double p, int64_t correction);
#define LOCUS_REDUCE_BACKWARD(id, name, rule, cast, expr)                                                       \
  [](const Tensor& g, const Tensor& x, const Tensor& y, double n, const Shape& red, double p,                  \
     int64_t correction) -> Tensor {                                                                            \
    (void)g, (void)x, (void)y, (void)n, (void)red, (void)p, (void)correction;                                   \
    return expr;                                                                                                \
  },
constexpr ReduceBackward kReduceBackward[] = {LOCUS_REDUCE_OPS(LOCUS_REDUCE_BACKWARD)};
#undef LOCUS_REDUCE_BACKWARD

// PyTorch numbers a node by the overload that made it: sum, mean and prod of everything are
// <Op>Backward0 and their overloads over named dims <Op>Backward1; norm (1.13) is NormBackward1
// either way; the others have one overload.
#define LOCUS_REDUCE_NAME(id, name, ...) #id "Backward0",
constexpr const char* kNames[] = {LOCUS_REDUCE_OPS(LOCUS_REDUCE_NAME)};
#undef LOCUS_REDUCE_NAME
#define LOCUS_REDUCE_NAME(id, name, ...) #id "Backward1",
constexpr const char* kDimNames[] = {LOCUS_REDUCE_OPS(LOCUS_REDUCE_NAME)};
#undef LOCUS_REDUCE_NAME

const char* node_name(OpId op, int index, bool over_dims) {
  const bool numbered = op == OpId::Sum || op == OpId::Mean || op == OpId::Prod;
  return op == OpId::Norm || (numbered && over_dims) ? kDimNames[index] : kNames[index];
}

#define LOCUS_FIRST_REDUCE(id, ...) OpId::id,
constexpr OpId kReduceOps[] = {LOCUS_REDUCE_OPS(LOCUS_FIRST_REDUCE)};
#undef LOCUS_FIRST_REDUCE

Tensor as(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

}  // namespace

Tensor prod_of_nonzero(const Tensor& x, const Shape& red) {
  Tensor r = where(x != 0, x, ones_like(x));
  for (int64_t d : red) r = prod(r, d, /*keepdim=*/true);  // prod takes one dim at a time, as PyTorch's
  return r;
}

void record_reduction(OpId op, const Tensor& x, const Shape& reduced, bool keepdim, bool over_dims,
                      const ops::fn::ReduceParams& params, const Tensor& out) {
  const int index = static_cast<int>(op) - static_cast<int>(kReduceOps[0]);
  const Shape sx = x.shape();
  const DType dx = x.dtype(), dy = out.dtype();
  Shape red;
  int64_t count = 1;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) red.push_back(static_cast<int64_t>(d)), count *= sx[d];
  const ReduceBackward backward = kReduceBackward[index];
  // Sum and mean need neither the input nor the output: nothing is saved for them.
  const bool saves = op != OpId::Sum && op != OpId::Mean;
  const Tensor X = saves ? as(x.detach(), dy) : Tensor(), Y = saves ? out.detach() : Tensor();
  record(out, node_name(op, index, over_dims), [=](const Tensor& g) -> std::vector<Tensor> {
    auto kept = [&](Tensor t) {
      if (!keepdim)
        for (int64_t d : red) t = t.unsqueeze(d);
      return t;
    };
    const Tensor gx = backward(kept(g), X, saves ? kept(Y) : Y, static_cast<double>(std::max<int64_t>(count, 1)), red,
                               params.p, params.correction);
    return {as(gx.expand(sx).contiguous(), dx)};
  }, {&x}, {{X, x}, {Y, out}});
}

}  // namespace locus::autograd
