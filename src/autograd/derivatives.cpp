// Backward formulas of the differentiable ops. Every saved tensor is detached (Note in node.h)
// and the arithmetic runs in the output's dtype; sum_to brings each gradient back to its
// input's shape and dtype.

#include "src/autograd/derivatives.h"

#include <cmath>

#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"

namespace locus::autograd {
namespace {

using ops::OpId;

Tensor as(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }
Tensor mask(const Tensor& condition, DType dtype) { return condition.to(dtype); }

}  // namespace

void record_binary(OpId op, const Tensor& a, const Tensor& b, const Scalar& alpha, const Tensor& out) {
  const DType dt = out.dtype();
  const Tensor A = a.detach(), B = b.detach(), O = out.detach();
  const Shape sa = a.shape(), sb = b.shape();
  const DType da = a.dtype(), db = b.dtype();
  record(out, "BinaryBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor x = as(A, dt), y = as(B, dt);
    Tensor ga, gb;
    switch (op) {
      case OpId::Add: ga = g, gb = alpha.to_double() == 1.0 ? g : mul(g, alpha); break;
      case OpId::Sub: ga = g, gb = mul(g, -alpha.to_double()); break;
      case OpId::Mul: ga = mul(g, y), gb = mul(g, x); break;
      case OpId::Div: ga = div(g, y), gb = neg(mul(g, div(O, y))); break;
      case OpId::Pow: ga = mul(g, mul(y, pow(x, sub(y, 1)))), gb = mul(g, mul(O, log(x))); break;
      case OpId::Maximum:
      case OpId::Minimum: {
        // Ties split the gradient evenly, as in PyTorch.
        const Tensor wins_a = op == OpId::Maximum ? gt(x, y) : lt(x, y);
        const Tensor half_tie = mul(mask(eq(x, y), dt), 0.5);
        ga = mul(g, add(mask(wins_a, dt), half_tie));
        gb = mul(g, add(mask(op == OpId::Maximum ? lt(x, y) : gt(x, y), dt), half_tie));
        break;
      }
      default: return {};
    }
    return {sum_to(ga, sa, da), sum_to(gb, sb, db)};
  }, {&a, &b});
}

void record_binary_scalar(OpId op, const Tensor& a, const Scalar& b, const Tensor& out) {
  const DType dt = out.dtype();
  const Tensor A = a.detach();
  const Shape sa = a.shape();
  const DType da = a.dtype();
  const double s = b.to_double();
  record(out, "BinaryScalarBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor ga;
    switch (op) {
      case OpId::Add:
      case OpId::Sub: ga = g; break;
      case OpId::Mul: ga = mul(g, s); break;
      case OpId::Div: ga = div(g, s); break;
      case OpId::Pow: ga = s == 0 ? zeros_like(g) : mul(g, mul(pow(as(A, dt), s - 1), s)); break;
      default: return {};
    }
    return {sum_to(ga, sa, da)};
  }, {&a});
}

void record_unary(OpId op, const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi,
                  const Tensor& out) {
  const DType dt = out.dtype();
  const Tensor X = x.detach(), O = out.detach();
  const DType dx = x.dtype();
  const Shape sx = x.shape();
  record(out, "UnaryBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor v = as(X, dt);
    Tensor gx;
    switch (op) {
      case OpId::Neg: gx = neg(g); break;
      case OpId::Abs: gx = mul(g, sub(mask(gt(v, 0), dt), mask(lt(v, 0), dt))); break;
      case OpId::Exp: gx = mul(g, O); break;
      case OpId::Log: gx = div(g, v); break;
      case OpId::Sqrt: gx = div(g, mul(O, 2)); break;
      case OpId::Tanh: gx = mul(g, add(neg(mul(O, O)), 1)); break;
      case OpId::Sigmoid: gx = mul(g, mul(O, add(neg(O), 1))); break;
      case OpId::Relu: gx = mul(g, mask(gt(O, 0), dt)); break;
      case OpId::Gelu: {
        // d/dx x*Phi(x) = Phi(x) + x*phi(x); Phi from gelu(x)/x (0.5 at 0), phi from exp.
        const Tensor cdf = where(eq(v, 0), full_like(v, 0.5), div(O, v));
        const Tensor pdf = mul(exp(mul(mul(v, v), -0.5)), 0.3989422804014327);
        gx = mul(g, add(cdf, mul(v, pdf)));
        break;
      }
      case OpId::Clamp: {
        Tensor keep = ones_like(v);
        if (lo) keep = mul(keep, mask(ge(v, *lo), dt));
        if (hi) keep = mul(keep, mask(le(v, *hi), dt));
        gx = mul(g, keep);
        break;
      }
      default: return {};
    }
    return {sum_to(gx, sx, dx)};
  }, {&x});
}

void record_where(const Tensor& condition, const Tensor& a, const Tensor& b, const Tensor& out) {
  const Tensor C = condition.detach();
  const Shape sa = a.shape(), sb = b.shape();
  const DType da = a.dtype(), db = b.dtype();
  record(out, "WhereBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor zero = zeros_like(g);
    return {sum_to(where(C, g, zero), sa, da), sum_to(where(C, zero, g), sb, db)};
  }, {&a, &b});
}

void record_sum(const Tensor& x, const std::vector<bool>& reduced, bool keepdim, bool mean, const Tensor& out) {
  const Shape sx = x.shape();
  const DType dx = x.dtype();
  int64_t count = 1;
  for (size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) count *= sx[d];
  record(out, mean ? "MeanBackward" : "SumBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor e = g;
    if (!keepdim)
      for (size_t d = 0; d < reduced.size(); ++d)
        if (reduced[d]) e = e.unsqueeze(static_cast<int64_t>(d));
    e = e.expand(sx);
    if (mean) e = div(e, static_cast<double>(std::max<int64_t>(count, 1)));
    return {as(e.contiguous(), dx)};
  }, {&x});
}

void record_softmax(bool log, int64_t dim, const Tensor& x, const Tensor& out) {
  const Tensor O = out.detach();
  const DType dx = x.dtype();
  record(out, log ? "LogSoftmaxBackward" : "SoftmaxBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor gx = log ? sub(g, mul(exp(O), sum(g, Shape{dim}, true))) : mul(O, sub(g, sum(mul(g, O), Shape{dim}, true)));
    return {as(gx, dx)};
  }, {&x});
}

void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  const Tensor A = a.detach(), B = b.detach();
  const Shape sa = a.shape(), sb = b.shape();
  // Only the products someone needs: the input batch of a first layer needs no gradient, and
  // its product would cost as much as the forward pass.
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  record(out, "MatmulBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor ga, gb;
    if (need_a) ga = sum_to(matmul(g, B.transpose(-2, -1)), sa, A.dtype());
    if (need_b) {
      // A weight used as W.t() (Linear) gets its gradient in W's own layout: (g^T A)^T rather
      // than A^T g, so the gradient the optimizer reads is contiguous.
      const bool transposed_view = B.dim() == 2 && A.dim() == 2 && B.stride(0) == 1 && B.stride(1) == B.size(0);
      gb = transposed_view ? matmul(g.t(), A).t() : sum_to(matmul(A.transpose(-2, -1), g), sb, B.dtype());
      if (transposed_view && gb.dtype() != B.dtype()) gb = gb.to(B.dtype());
    }
    return {ga, gb};
  }, {&a, &b});
}

void record_to(const Tensor& x, const Tensor& out) {
  const Device dev = x.device();
  const DType dx = x.dtype();
  record(out, "ToBackward", [=](const Tensor& g) -> std::vector<Tensor> { return {g.to(dev, dx)}; }, {&x});
}

void record_cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) {
  std::vector<int64_t> sizes;
  std::vector<DType> dtypes;
  for (const Tensor& t : inputs) sizes.push_back(t.size(dim)), dtypes.push_back(t.dtype());
  record(out, "CatBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    std::vector<Tensor> grads;
    int64_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      grads.push_back(as(g.narrow(dim, offset, sizes[i]), dtypes[i]));
      offset += sizes[i];
    }
    return grads;
  }, inputs);
}

void record_view(const char* name, const Tensor& x, const Tensor& out, std::function<Tensor(const Tensor&)> grad_of_input) {
  record(out, name, [f = std::move(grad_of_input)](const Tensor& g) -> std::vector<Tensor> { return {f(g)}; }, {&x});
}

}  // namespace locus::autograd
