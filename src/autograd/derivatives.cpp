// Backward formulas of the structured ops (the elementwise ones come from the op table, see
// elementwise_derivatives.cpp). Every saved tensor is detached (Note in node.h)
// and the arithmetic runs in the output's dtype; sum_to brings each gradient back to its
// input's shape and dtype.

#include "src/autograd/derivatives.h"

#include <cmath>

#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/shape_ops.h"
#include "src/autograd/node.h"

namespace locus::autograd {
namespace {

using ops::OpId;

Tensor as(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

}  // namespace

void record_softmax(bool log, int64_t dim, const Tensor& x, const Tensor& out) {
  const Tensor O = out.detach();
  const DType dx = x.dtype();
  record(out, log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor gx = log ? sub(g, mul(exp(O), sum(g, Shape{dim}, true))) : mul(O, sub(g, sum(mul(g, O), Shape{dim}, true)));
    return {as(gx, dx)};
  }, {&x}, {{O, out}});
}

void record_extreme(bool is_min, const Tensor& x, std::optional<int64_t> dim, bool keepdim, const Tensor& values,
                    const Tensor& indices) {
  const Tensor X = x.detach(), V = values.detach(), I = indices.defined() ? indices.detach() : Tensor();
  const DType dx = x.dtype();
  // PyTorch's numbering: max(dim) is MaxBackward0, max() of everything MaxBackward1.
  const char* name = is_min ? (dim ? "MinBackward0" : "MinBackward1") : (dim ? "MaxBackward0" : "MaxBackward1");
  record(values, name, [=](const Tensor& g) -> std::vector<Tensor> {
    if (!dim) {
      const Tensor ties = (X == V).to(dx);
      return {ties * (g / ties.sum())};
    }
    const int64_t d = *dim < 0 ? *dim + X.dim() : *dim;
    Tensor gk = g, ik = I;
    if (!keepdim && X.dim() > 0) gk = g.unsqueeze(d), ik = I.unsqueeze(d);
    if (X.dim() == 0) return {g};
    Shape along(static_cast<size_t>(X.dim()), 1);
    along[static_cast<size_t>(d)] = X.size(d);
    const Tensor positions = arange(X.size(d), TensorOptions().device(X.device())).view(along);
    return {(positions == ik).to(dx) * gk};
  }, {&x}, {{X, x}, {V, values}, {I, indices}});
}

void record_matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  // Only the products someone needs: the input batch of a first layer needs no gradient, and
  // its product would cost as much as the forward pass; each operand is held only when the
  // other one's gradient reads it.
  const bool need_a = a.requires_grad(), need_b = b.requires_grad();
  const Tensor A = need_b ? a.detach() : Tensor(), B = need_a ? b.detach() : Tensor();
  const Shape sa = a.shape(), sb = b.shape();
  const DType da = a.dtype(), db = b.dtype();
  // A weight used as W.t() (Linear) gets its gradient in W's own layout: (g^T A)^T rather
  // than A^T g, so the gradient the optimizer reads is contiguous.
  const bool transposed_view = b.dim() == 2 && a.dim() == 2 && b.stride(0) == 1 && b.stride(1) == b.size(0);
  // PyTorch's names: mm and a matmul of two matrices record MmBackward0, bmm BmmBackward0.
  const char* name = a.dim() == 2 && b.dim() == 2 ? "MmBackward0" : a.dim() == 3 && b.dim() == 3 ? "BmmBackward0" : "MatmulBackward0";
  record(out, name, [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor ga, gb;
    if (need_a) ga = sum_to(matmul(g, B.transpose(-2, -1)), sa, da);
    if (need_b) {
      gb = transposed_view ? matmul(g.t(), A).t() : sum_to(matmul(A.transpose(-2, -1), g), sb, db);
      if (transposed_view && gb.dtype() != db) gb = gb.to(db);
    }
    return {ga, gb};
  }, {&a, &b}, {{A, a}, {B, b}});
}

void record_to(const Tensor& x, const Tensor& out) {
  const Device dev = x.device();
  const DType dx = x.dtype();
  record(out, "ToCopyBackward0", [=](const Tensor& g) -> std::vector<Tensor> { return {g.to(dev, dx)}; }, {&x});
}

void record_cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) {
  std::vector<int64_t> sizes;
  std::vector<DType> dtypes;
  for (const Tensor& t : inputs) sizes.push_back(t.size(dim)), dtypes.push_back(t.dtype());
  record(out, "CatBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    std::vector<Tensor> grads;
    int64_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      grads.push_back(as(g.narrow(dim, offset, sizes[i]), dtypes[i]));
      offset += sizes[i];
    }
    return grads;
  }, inputs);
}

void record_split(const char* name, const Tensor& x, int64_t dim, bool unbind, const std::vector<Tensor>& outputs) {
  auto node = std::make_shared<MultiOutputNode>(name, [dim, unbind](const std::vector<Tensor>& grads) -> std::vector<Tensor> {
    return {unbind ? stack(grads, dim) : cat(grads, dim)};
  }, outputs);
  node->add_next_edge(gradient_edge(x));
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].impl()->set_grad_fn(node, static_cast<uint32_t>(i));
    outputs[i].impl()->set_requires_grad(true);
  }
}

void record_view(const char* name, const Tensor& x, const Tensor& out, std::function<Tensor(const Tensor&)> grad_of_input) {
  record(out, name, [f = std::move(grad_of_input)](const Tensor& g) -> std::vector<Tensor> { return {f(g)}; }, {&x});
}

void record_pick(bool gather, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  const Shape sx = x.shape();
  const DType dx = x.dtype();
  const Tensor idx = index.detach();
  record(out, gather ? "GatherBackward0" : "IndexSelectBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor zero = zeros(sx, TensorOptions().dtype(g.dtype()).device(g.device()));
    return {as(gather ? scatter_add(zero, dim, idx, g) : index_add(zero, dim, idx, g), dx)};
  }, {&x}, {{idx, index}});
}

void record_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  const Tensor idx = index.detach();
  const DType ds = self.dtype();
  if (!src.defined()) {
    record(out, "ScatterBackward1", [=](const Tensor& g) -> std::vector<Tensor> { return {as(scatter(g, dim, idx, 0), ds)}; },
           {&self}, {{idx, index}});
    return;
  }
  const DType dsrc = src.dtype();
  record(out, "ScatterBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    return {as(scatter(g, dim, idx, 0), ds), as(gather(g, dim, idx), dsrc)};
  }, {&self, &src}, {{idx, index}});
}

void record_scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool index_add, double alpha,
                        const Tensor& out) {
  const Tensor idx = index.detach();
  const DType ds = self.dtype(), dsrc = src.dtype();
  const Shape src_shape = src.shape();
  record(out, index_add ? "IndexAddBackward0" : "ScatterAddBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor gs = index_add ? index_select(g, dim, idx) : gather(g, dim, idx);
    if (index_add && alpha != 1) gs = mul(gs, alpha);
    if (!(gs.shape() == src_shape)) gs = gs.reshape(src_shape);  // a 0-dim source of a 0-dim self
    return {as(g, ds), as(gs, dsrc)};
  }, {&self, &src}, {{idx, index}});
}

void record_masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source, const Tensor& out) {
  const Tensor m = mask.detach();
  const DType ds = self.dtype(), dsrc = source.dtype();
  const Shape src_shape = source.shape();
  const int64_t src_numel = source.numel();
  record(out, "MaskedScatterBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor picked = masked_select(g, m);
    Tensor gsrc = zeros({src_numel}, TensorOptions().dtype(g.dtype()).device(g.device()));
    gsrc.narrow(0, 0, picked.numel()).copy_(picked);
    return {as(masked_fill(g, m, 0), ds), as(gsrc.view(src_shape), dsrc)};
  }, {&self, &source}, {{m, mask}});
}

void record_index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate, const Tensor& out) {
  std::vector<Tensor> idx;
  for (const Tensor& t : indices) idx.push_back(t.defined() ? t.detach() : t);
  const DType ds = self.dtype(), dv = values.dtype();
  const Shape sv = values.shape();
  record(out, "IndexPutBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor gs = g;
    if (!accumulate) gs = g.index_put(idx, zeros({}, TensorOptions().dtype(g.dtype()).device(g.device())), false);
    std::vector<indexing::TensorIndex> entries;
    for (const Tensor& t : idx) entries.push_back(t.defined() ? indexing::TensorIndex(t) : indexing::TensorIndex(Slice()));
    return {as(gs, ds), sum_to(g.index(entries), sv, dv)};
  }, {&self, &values});
}

}  // namespace locus::autograd
