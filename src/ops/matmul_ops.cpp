// Front ends of the products on KernelTable::matmul: matmul, mm, bmm, addmm, baddbmm (mv, dot,
// outer and einsum are built on these in product_ops.cpp and einsum.cpp).

#include <algorithm>
#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/public_op.h"
#include "src/ops/strided_iter.h"
#include "src/ops/structured_call.h"

namespace locus {
namespace {

using ops::OpId;

[[noreturn]] void shape_error(const Tensor& a, const Tensor& b, const std::string& why) {
  std::ostringstream os;
  os << ops::op_prefix(OpId::Matmul) << "cannot multiply shapes " << a.shape() << " and " << b.shape() << ": " << why;
  throw ShapeError(os.str());
}

// What addmm / baddbmm add to the product: beta * self, and the product's scale alpha
// (Note [Product scaling]). A plain product has no `self`, beta 0 and alpha 1.
struct Scaling {
  Tensor self;
  Scalar beta = 0, alpha = 1;
  bool plain() const { return !self.defined() && alpha.to_double() == 1; }
};

// The gradients of beta * self + alpha * (a @ b): the composition would give them too, but
// the forward is one kernel call, so its backward is written here (the products' gradients as
// record_matmul's, scaled by alpha).
void record_scaled_product(const Scaling& sc, const Tensor& a, const Tensor& b, const Tensor& out) {
  const Tensor A = a.detach(), B = b.detach();
  const Shape sa = a.shape(), sb = b.shape(), ss = sc.self.defined() ? sc.self.shape() : Shape{};
  const DType ds = sc.self.defined() ? sc.self.dtype() : a.dtype();
  const bool has_self = sc.self.defined(), need_self = has_self && sc.self.requires_grad(),
             need_a = a.requires_grad(), need_b = b.requires_grad();
  const Scalar alpha = sc.alpha, beta = sc.beta;
  auto backward = [=](const Tensor& g) -> std::vector<Tensor> {
    Tensor gs, ga, gb;
    if (need_self) gs = autograd::sum_to(g * beta, ss, ds);
    if (need_a) ga = autograd::sum_to(matmul(g, B.transpose(-2, -1)) * alpha, sa, A.dtype());
    if (need_b) gb = autograd::sum_to(matmul(A.transpose(-2, -1), g) * alpha, sb, B.dtype());
    if (!has_self) return {ga, gb};
    return {gs, ga, gb};
  };
  if (has_self) autograd::record(out, "AddmmBackward0", backward, {&sc.self, &a, &b}, {{A, a}, {B, b}});
  else autograd::record(out, "MmBackward0", backward, {&a, &b}, {{A, a}, {B, b}});
}

// Batched product of a [..., m, k] and b [..., k, n] with broadcast batch dims, plus the
// scaling. Its errors say 'matmul', or the public op's name inside its PublicOp.
Tensor batched_product(const Tensor& a, const Tensor& b, const Tensor& out, const Scaling& sc = {}) {
  // Step 1 of Note [Structured op path]; addmm's operands carry PyTorch's names.
  const ops::StructuredCall call = sc.self.defined()
                                       ? ops::StructuredCall(OpId::Matmul, {{sc.self, "self"}, {a, "mat1"}, {b, "mat2"}}, out)
                                       : ops::StructuredCall(OpId::Matmul, {{a, "self"}, {b, "other"}}, out);
  if (a.dtype() != b.dtype())
    throw DTypeError(ops::op_prefix(OpId::Matmul) + "expected both operands to have the same dtype, got " +
                     std::string(dtype_name(a.dtype())) + " and " + std::string(dtype_name(b.dtype())));
  if (sc.self.defined() && sc.self.dtype() != a.dtype())
    throw DTypeError(ops::op_prefix(OpId::Matmul) + "self and mat2 must have the same dtype, got " +
                     std::string(dtype_name(sc.self.dtype())) + " and " + std::string(dtype_name(b.dtype())));
  if (a.dtype() == DType::Bool) throw DTypeError(ops::op_prefix(OpId::Matmul) + "is not supported for bool tensors");
  // PyTorch's products write no other dtype into out= (unlike the reductions, which cast).
  if (out.defined() && out.dtype() != a.dtype())
    throw DTypeError(ops::op_prefix(OpId::Matmul) + "expected out tensor to have dtype " +
                     std::string(dtype_name(a.dtype())) + ", but got " + std::string(dtype_name(out.dtype())) + " instead");
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  if (b.size(-2) != k) shape_error(a, b, "the inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(b.size(-2)) + ")");
  Shape batch_a(std::span<const int64_t>(a.shape().data(), a.shape().size() - 2));
  Shape batch_b(std::span<const int64_t>(b.shape().data(), b.shape().size() - 2));
  const Shape batch = ops::broadcast_shapes(batch_a, batch_b, OpId::Matmul);
  Shape full_a = batch, full_b = batch, out_shape = batch;
  full_a.push_back(m), full_a.push_back(k);
  full_b.push_back(k), full_b.push_back(n);
  out_shape.push_back(m), out_shape.push_back(n);
  // self broadcasts to the result (PyTorch's expand error when it cannot).
  const Tensor self = sc.self.defined() ? sc.self.expand(out_shape) : Tensor();
  if (!sc.plain() && !is_floating_point(a.dtype())) {
    // Note [Product scaling]: the integer kernels take no alpha or beta, which PyTorch truncates
    // to integers for integer tensors. Nothing here is differentiable.
    Tensor r = batched_product(a, b, Tensor());
    const int64_t alpha = sc.alpha.to_int64(), beta = sc.beta.to_int64();
    if (alpha != 1) r = r * Scalar(alpha);
    if (self.defined() && beta != 0) r = r + self * Scalar(beta);
    return call.finish(r);
  }
  const ops::KernelTable* kt = call.kernels(a.dtype());
  if (!kt) {
    if (sc.self.defined())
      return call.fall_back([&](const Tensor& hs, const Tensor& ha, const Tensor& hb) {
        return batched_product(ha, hb, Tensor(), Scaling{hs, sc.beta, sc.alpha});
      }, sc.self, a, b);
    return call.fall_back([&](const Tensor& ha, const Tensor& hb) {
      return batched_product(ha, hb, Tensor(), Scaling{Tensor(), sc.beta, sc.alpha});
    }, a, b);
  }
  // Batch dims are flattened; a broadcast operand is expanded and made contiguous only
  // when its batch dims cannot be walked with one stride.
  const int64_t nbatch = batch.numel();
  auto batch_view = [&](const Tensor& t, const Shape& full) {
    if (t.shape() == full && batch.size() <= 1) return t;  // mm, bmm: no view to allocate
    Tensor e = t.expand(full);
    if (batch.size() <= 1) return e;
    return e.reshape(Shape{nbatch, full[full.size() - 2], full[full.size() - 1]});
  };
  const Tensor ea = batch_view(a, full_a), eb = batch_view(b, full_b);
  // The kernel writes a contiguous [batch, m, n] result: out= itself when it is one.
  const Tensor result = call.output(out_shape, a.dtype());
  // beta == 0 leaves C unread (NaN in self does not reach the result, as PyTorch documents).
  const double beta = self.defined() ? sc.beta.to_double() : 0.0;
  if (beta != 0 && result.numel()) {
    const NoGradGuard copying;  // the copy is part of this op, whose gradient is recorded below
    Tensor(result).copy_(self);
  }
  ops::MatmulArgs g;
  g.device = call.device_index();
  g.dtype = a.dtype();
  g.batch = nbatch, g.m = m, g.n = n, g.k = k;
  const auto stride = [](const Tensor& t, int64_t from_end) { return t.stride(t.dim() - from_end); };
  g.a = ops::strided_operand(ea), g.a_row = stride(ea, 2), g.a_col = stride(ea, 1);
  g.a_batch_stride = ea.dim() > 2 ? stride(ea, 3) : 0;
  g.b = ops::strided_operand(eb), g.b_row = stride(eb, 2), g.b_col = stride(eb, 1);
  g.b_batch_stride = eb.dim() > 2 ? stride(eb, 3) : 0;
  g.c = ops::dense_result(result), g.c_batch_stride = m * n;
  g.alpha = sc.alpha.to_double(), g.beta = beta;
  call.wait_for_inputs();
  if (result.numel()) kt->matmul(g);
  if (call.needs_grad()) {
    if (sc.plain()) autograd::record_matmul(a, b, result);
    else record_scaled_product(sc, a, b, result);
  }
  return call.finish(result);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  const ops::PublicOp op("mm", {{a, "self"}, {b, "mat2"}});
  if (ops::autocast_active()) return ops::autocast(OpId::Matmul, [](const Tensor& x, const Tensor& y) { return mm(x, y); }, a, b);
  if (a.dim() != 2 || b.dim() != 2) shape_error(a, b, "both operands must be 2-D");
  return batched_product(a, b, Tensor());
}

Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  const ops::PublicOp op("mm", {{a, "self"}, {b, "mat2"}, {out, "out"}});
  if (a.dim() != 2 || b.dim() != 2) shape_error(a, b, "both operands must be 2-D");
  batched_product(a, b, out);
  return out;
}

namespace {

// bmm's shape rule, in PyTorch's words: both 3-D, batch2 of size [batch, k].
void check_bmm_shapes(const Tensor& batch1, const Tensor& batch2) {
  if (batch1.dim() != 3) throw ShapeError(ops::op_prefix(OpId::Matmul) + "batch1 must be a 3D tensor");
  if (batch2.dim() != 3) throw ShapeError(ops::op_prefix(OpId::Matmul) + "batch2 must be a 3D tensor");
  if (batch2.size(0) != batch1.size(0) || batch2.size(1) != batch1.size(2)) {
    std::ostringstream os;
    os << ops::op_prefix(OpId::Matmul) << "Expected size for first two dimensions of batch2 tensor to be: [" << batch1.size(0)
       << ", " << batch1.size(2) << "] but got: [" << batch2.size(0) << ", " << batch2.size(1) << "].";
    throw ShapeError(os.str());
  }
}

void check_mm_shapes(const Tensor& mat1, const Tensor& mat2) {
  for (const auto& [t, name] : {std::pair{&mat1, "mat1"}, std::pair{&mat2, "mat2"}})
    if (t->dim() != 2)
      throw ShapeError(ops::op_prefix(OpId::Matmul) + name + " must be a matrix, got " + std::to_string(t->dim()) +
                       "-D tensor");
  if (mat1.size(1) != mat2.size(0)) {
    std::ostringstream os;
    os << ops::op_prefix(OpId::Matmul) << "mat1 and mat2 shapes cannot be multiplied (" << mat1.size(0) << "x"
       << mat1.size(1) << " and " << mat2.size(0) << "x" << mat2.size(1) << ")";
    throw ShapeError(os.str());
  }
}

}  // namespace

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  const ops::PublicOp op("bmm", {{self, "self"}, {mat2, "mat2"}});
  if (ops::autocast_active()) return ops::autocast(OpId::Matmul, [](const Tensor& x, const Tensor& y) { return bmm(x, y); }, self, mat2);
  check_bmm_shapes(self, mat2);
  return batched_product(self, mat2, Tensor());
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  const ops::PublicOp op("addmm", {{self, "self"}, {mat1, "mat1"}, {mat2, "mat2"}});
  if (ops::autocast_active())
    return ops::autocast(OpId::Matmul, [&](const Tensor& s, const Tensor& x, const Tensor& y) { return addmm(s, x, y, beta, alpha); },
                         self, mat1, mat2);
  check_mm_shapes(mat1, mat2);
  return batched_product(mat1, mat2, Tensor(), Scaling{self, beta, alpha});
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  const ops::PublicOp op("baddbmm", {{self, "self"}, {batch1, "batch1"}, {batch2, "batch2"}});
  if (ops::autocast_active())
    return ops::autocast(OpId::Matmul,
                         [&](const Tensor& s, const Tensor& x, const Tensor& y) { return baddbmm(s, x, y, beta, alpha); },
                         self, batch1, batch2);
  // PyTorch sizes the result from batch1's dims 0 and 1 and batch2's dim 2 before its 3-D
  // checks, so a missing one of those is its IndexError.
  for (const auto& [t, d] : {std::pair{&batch1, 0}, std::pair{&batch1, 1}, std::pair{&batch2, 2}})
    if (d >= t->dim()) {
      const int64_t n = std::max<int64_t>(t->dim(), 1);
      throw IndexError(ops::op_prefix(OpId::Matmul) + "Dimension out of range (expected to be in range of [" +
                       std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got " + std::to_string(d) + ")");
    }
  check_bmm_shapes(batch1, batch2);
  return batched_product(batch1, batch2, Tensor(), Scaling{self, beta, alpha});
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  // The vector cases add views around the product; its errors still say 'matmul'.
  ops::common_device(OpId::Matmul, {{a, "self"}, {b, "other"}});
  if (ops::autocast_active())
    return ops::autocast(OpId::Matmul, [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, a, b);
  if (a.dim() == 0 || b.dim() == 0) shape_error(a, b, "both operands need at least one dimension");
  if (a.dim() == 1 && b.dim() == 1) {
    if (a.size(0) != b.size(0)) shape_error(a, b, "vectors of different lengths");
    return batched_product(a.unsqueeze(0), b.unsqueeze(1), Tensor()).reshape(Shape{});
  }
  if (a.dim() == 1) return batched_product(a.unsqueeze(0), b, Tensor()).squeeze(-2);
  if (b.dim() == 1) return batched_product(a, b.unsqueeze(1), Tensor()).squeeze(-1);
  return batched_product(a, b, Tensor());
}

}  // namespace locus
