// Front ends of matmul and mm.

#include <sstream>

#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"
#include "src/ops/public_op.h"
#include "src/ops/strided_iter.h"

namespace locus {
namespace {

using ops::OpId;

[[noreturn]] void shape_error(const Tensor& a, const Tensor& b, const std::string& why) {
  std::ostringstream os;
  os << ops::op_prefix(OpId::Matmul) << "cannot multiply shapes " << a.shape() << " and " << b.shape() << ": " << why;
  throw ShapeError(os.str());
}

// Batched product of a [..., m, k] and b [..., k, n] with broadcast batch dims. Its errors say
// 'matmul', or 'mm' inside mm's PublicOp.
Tensor batched_product(const Tensor& a, const Tensor& b, Tensor out) {
  const Device device = ops::common_device(OpId::Matmul, {{a, "self"}, {b, "other"}});
  if (a.dtype() != b.dtype())
    throw DTypeError(ops::op_prefix(OpId::Matmul) + "expected both operands to have the same dtype, got " +
                     std::string(dtype_name(a.dtype())) + " and " + std::string(dtype_name(b.dtype())));
  if (a.dtype() == DType::Bool) throw DTypeError(ops::op_prefix(OpId::Matmul) + "is not supported for bool tensors");
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  if (b.size(-2) != k) shape_error(a, b, "the inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(b.size(-2)) + ")");
  Shape batch_a(std::span<const int64_t>(a.shape().data(), a.shape().size() - 2));
  Shape batch_b(std::span<const int64_t>(b.shape().data(), b.shape().size() - 2));
  const Shape batch = ops::broadcast_shapes(batch_a, batch_b, OpId::Matmul);
  Shape full_a = batch, full_b = batch, out_shape = batch;
  full_a.push_back(m), full_a.push_back(k);
  full_b.push_back(k), full_b.push_back(n);
  out_shape.push_back(m), out_shape.push_back(n);
  const ops::KernelTable* kt = ops::kernels_for(OpId::Matmul, device, a.dtype());
  if (!kt) {
    Tensor r = ops::run_on_cpu(device, [&](const Tensor& ha, const Tensor& hb) { return batched_product(ha, hb, Tensor()); },
                               a, b);
    return out.defined() ? out.copy_(r) : r;
  }
  // Batch dims are flattened; a broadcast operand is expanded and made contiguous only
  // when its batch dims cannot be walked with one stride.
  const int64_t nbatch = batch.numel();
  auto batch_view = [&](const Tensor& t, const Shape& full) {
    Tensor e = t.expand(full);
    if (batch.size() <= 1) return e;
    return e.reshape(Shape{nbatch, full[full.size() - 2], full[full.size() - 1]});
  };
  const Tensor ea = batch_view(a, full_a), eb = batch_view(b, full_b);
  if (out.defined()) {
    autograd::check_not_recording_into(out, "mm");
    if (autograd::needs_grad({&a, &b}))
      throw ValueError(ops::op_prefix(OpId::Matmul) + "the out= form is not differentiable, and an input requires grad");
    if (!(out.shape() == out_shape) || out.dtype() != a.dtype() || !out.is_contiguous() || out.device() != device) {
      std::ostringstream os;
      os << ops::op_prefix(OpId::Matmul) << "out must be a contiguous " << dtype_name(a.dtype()) << " tensor of shape " << out_shape
         << " on " << device;
      throw ShapeError(os.str());
    }
  } else {
    out = ops::empty_on(out_shape, a.dtype(), device);
  }
  ops::MatmulArgs g;
  g.device = device.is_cpu() ? 0 : device.index();
  g.dtype = a.dtype();
  g.batch = nbatch, g.m = m, g.n = n, g.k = k;
  const auto stride = [](const Tensor& t, int64_t from_end) { return t.stride(t.dim() - from_end); };
  g.a = static_cast<const char*>(ea.data_ptr()), g.a_row = stride(ea, 2), g.a_col = stride(ea, 1);
  g.a_batch_stride = ea.dim() > 2 ? stride(ea, 3) : 0;
  g.b = static_cast<const char*>(eb.data_ptr()), g.b_row = stride(eb, 2), g.b_col = stride(eb, 1);
  g.b_batch_stride = eb.dim() > 2 ? stride(eb, 3) : 0;
  g.c = static_cast<char*>(out.data_ptr()), g.c_batch_stride = m * n;
  ops::wait_for_host(ea);
  ops::wait_for_host(eb);
  if (out.numel()) kt->matmul(g);
  if (autograd::needs_grad({&a, &b})) autograd::record_matmul(a, b, out);
  return out;
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
