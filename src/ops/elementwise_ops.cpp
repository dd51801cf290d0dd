// Front ends of the elementwise ops: device check, dtype promotion, broadcasting, output,
// kernel (or CPU fallback).

#include <cmath>
#include <sstream>
#include <string>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/dispatch.h"
#include "src/ops/elementwise.h"
#include "src/ops/strided_iter.h"

namespace locus {
namespace ops {
namespace {

bool is_comparison(OpId op) { return op >= OpId::Eq && op <= OpId::Ge; }

std::string op_prefix(OpId op) { return "[locus::" + std::string(op_name(op)) + "] "; }

// The dtype the kernel computes in, with PyTorch's errors for meaningless combinations.
DType compute_dtype(OpId op, DType common) {
  if (op == OpId::Div && !is_floating_point(common)) return kDefaultFloat;
  if (common == DType::Bool && op == OpId::Sub)
    throw DTypeError(op_prefix(op) + "subtraction of bool tensors is not supported; use logical ops or convert "
                                     "with .to(kInt64) first");
  if (common == DType::Bool && op == OpId::Pow)
    throw DTypeError(op_prefix(op) + "pow of bool tensors is not supported; convert with .to(kInt64) first");
  return common;
}

void check_alpha(OpId op, DType dtype, const Scalar& alpha) {
  if (alpha.is_floating_point() && !is_floating_point(dtype) && alpha.to_double() != std::floor(alpha.to_double()))
    throw DTypeError(op_prefix(op) + "alpha " + std::to_string(alpha.to_double()) + " is not an integer, but the result dtype is " +
                     std::string(dtype_name(dtype)));
}

// A CPU 0-dim operand of an op on another device is moved there (one element; it is a scalar).
Tensor on_device(const Tensor& t, Device device) { return t.device() == device ? t : t.to(device); }

bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

void check_out(OpId op, const Tensor& out, const Shape& shape, DType result, Device device) {
  if (out.device() != device) throw DeviceMismatchError(device, out.device(), "out", std::string(op_name(op)));
  if (!(out.shape() == shape)) {
    std::ostringstream os;
    os << op_prefix(op) << "output with shape " << out.shape() << " doesn't match the broadcast shape " << shape;
    throw ShapeError(os.str());
  }
  if (!can_cast(result, out.dtype()))
    throw DTypeError(op_prefix(op) + "result type " + std::string(dtype_name(result)) +
                     " can't be cast to the desired output type " + std::string(dtype_name(out.dtype())));
}

// In-place and out= forms write into a given tensor, which autograd cannot record.
void check_out_grad(OpId op, const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  if (!out.defined()) return;
  autograd::check_not_recording_into(out, op_name(op));
  if (autograd::needs_grad(inputs))
    throw ValueError(op_prefix(op) + "the in-place and out= forms are not differentiable, and an input requires "
                                     "grad; use the out-of-place form");
}

}  // namespace

// out may be undefined (a new tensor is made) or given (in-place or _out forms).
Tensor binary(OpId op, const Tensor& a, const Tensor& b, const Scalar& alpha, Tensor out) {
  const Device device = common_device(op, {{a, "self"}, {b, "other"}});
  const DType common = result_type(a, b);
  const DType dtype = compute_dtype(op, common);
  check_alpha(op, dtype, alpha);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  const DType result = is_comparison(op) ? DType::Bool : dtype;
  if (out.defined()) check_out(op, out, shape, result, device);
  check_out_grad(op, out, {&a, &b});
  const KernelTable* k = kernels_for(op, device, dtype);
  if (!k) {
    Tensor r = binary(op, a.cpu(), b.cpu(), alpha, Tensor()).to(device);
    return out.defined() ? out.copy_(r) : r;
  }
  const Tensor ca = a.dtype() == dtype ? on_device(a, device) : on_device(a, device).to(dtype);
  const Tensor cb = b.dtype() == dtype ? on_device(b, device) : on_device(b, device).to(dtype);
  const bool direct = out.defined() && out.dtype() == result;
  Tensor target = direct ? out : empty_on(shape, result, device);
  wait_for_host(ca);
  wait_for_host(cb);
  k->binary(op, make_iter(target, {&ca, &cb}), alpha);
  if (out.defined() && !direct) out.copy_(target);
  if (!out.defined() && is_floating_point(result) && autograd::needs_grad({&a, &b}))
    autograd::record_binary(op, a, b, alpha, target);
  return out.defined() ? out : target;
}

Tensor binary_scalar(OpId op, const Tensor& a, const Scalar& b, const Scalar& alpha, Tensor out) {
  const Device device = a.device();
  const DType common = result_type(a, b);
  const DType dtype = compute_dtype(op, common);
  check_alpha(op, dtype, alpha);
  if (op == OpId::Pow && is_integral(dtype) && b.is_integral() && b.to_int64() < 0)
    throw ValueError(op_prefix(op) + "integers to negative integer powers are not allowed");
  const DType result = is_comparison(op) ? DType::Bool : dtype;
  if (out.defined()) check_out(op, out, a.shape(), result, device);
  check_out_grad(op, out, {&a});
  const KernelTable* k = kernels_for(op, device, dtype);
  if (!k) {
    Tensor r = binary_scalar(op, a.cpu(), b, alpha, Tensor()).to(device);
    return out.defined() ? out.copy_(r) : r;
  }
  const Tensor ca = a.dtype() == dtype ? a : a.to(dtype);
  const bool direct = out.defined() && out.dtype() == result;
  Tensor target = direct ? out : empty_on(a.shape(), result, device);
  wait_for_host(ca);
  k->binary_scalar(op, make_iter(target, {&ca}), b, alpha);
  if (out.defined() && !direct) out.copy_(target);
  if (!out.defined() && is_floating_point(result) && autograd::needs_grad({&a}))
    autograd::record_binary_scalar(op, a, b, target);
  return out.defined() ? out : target;
}

Tensor unary(OpId op, const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi, Tensor out) {
  const Device device = x.device();
  const bool keeps_integers = op == OpId::Neg || op == OpId::Abs || op == OpId::Relu || op == OpId::Clamp;
  if (op == OpId::Neg && x.dtype() == DType::Bool)
    throw DTypeError(op_prefix(op) + "negation of a bool tensor is not supported; use logical not instead");
  DType dtype = keeps_integers || is_floating_point(x.dtype()) ? x.dtype() : kDefaultFloat;
  if (op == OpId::Clamp && ((lo && lo->is_floating_point()) || (hi && hi->is_floating_point())) && !is_floating_point(dtype))
    dtype = kDefaultFloat;
  if (out.defined()) check_out(op, out, x.shape(), dtype, device);
  check_out_grad(op, out, {&x});
  const KernelTable* k = kernels_for(op, device, dtype);
  if (!k) {
    Tensor r = unary(op, x.cpu(), lo, hi, Tensor()).to(device);
    return out.defined() ? out.copy_(r) : r;
  }
  const Tensor cx = x.dtype() == dtype ? x : x.to(dtype);
  const bool direct = out.defined() && out.dtype() == dtype;
  Tensor target = direct ? out : empty_on(x.shape(), dtype, device);
  wait_for_host(cx);
  k->unary(op, make_iter(target, {&cx}), lo.value_or(Scalar(0)), hi.value_or(Scalar(0)), lo.has_value(), hi.has_value());
  if (out.defined() && !direct) out.copy_(target);
  if (!out.defined() && is_floating_point(dtype) && autograd::needs_grad({&x})) autograd::record_unary(op, x, lo, hi, target);
  return out.defined() ? out : target;
}

}  // namespace ops

using ops::OpId;

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return ops::binary(OpId::Add, a, b, alpha, {}); }
Tensor add(const Tensor& a, const Scalar& b) { return ops::binary_scalar(OpId::Add, a, b, 1, {}); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return ops::binary(OpId::Sub, a, b, alpha, {}); }
Tensor sub(const Tensor& a, const Scalar& b) { return ops::binary_scalar(OpId::Sub, a, b, 1, {}); }
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(OpId::Mul, a, b, 1, {}); }
Tensor mul(const Tensor& a, const Scalar& b) { return ops::binary_scalar(OpId::Mul, a, b, 1, {}); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(OpId::Div, a, b, 1, {}); }
Tensor div(const Tensor& a, const Scalar& b) { return ops::binary_scalar(OpId::Div, a, b, 1, {}); }
Tensor pow(const Tensor& a, const Tensor& e) { return ops::binary(OpId::Pow, a, e, 1, {}); }
Tensor pow(const Tensor& a, const Scalar& e) { return ops::binary_scalar(OpId::Pow, a, e, 1, {}); }
Tensor maximum(const Tensor& a, const Tensor& b) { return ops::binary(OpId::Maximum, a, b, 1, {}); }
Tensor minimum(const Tensor& a, const Tensor& b) { return ops::binary(OpId::Minimum, a, b, 1, {}); }
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) { ops::binary(OpId::Add, a, b, alpha, out); return out; }
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) { ops::binary(OpId::Sub, a, b, alpha, out); return out; }
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) { ops::binary(OpId::Mul, a, b, 1, out); return out; }
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) { ops::binary(OpId::Div, a, b, 1, out); return out; }

Tensor neg(const Tensor& x) { return ops::unary(OpId::Neg, x, {}, {}, {}); }
Tensor abs(const Tensor& x) { return ops::unary(OpId::Abs, x, {}, {}, {}); }
Tensor exp(const Tensor& x) { return ops::unary(OpId::Exp, x, {}, {}, {}); }
Tensor log(const Tensor& x) { return ops::unary(OpId::Log, x, {}, {}, {}); }
Tensor sqrt(const Tensor& x) { return ops::unary(OpId::Sqrt, x, {}, {}, {}); }
Tensor tanh(const Tensor& x) { return ops::unary(OpId::Tanh, x, {}, {}, {}); }
Tensor sigmoid(const Tensor& x) { return ops::unary(OpId::Sigmoid, x, {}, {}, {}); }
Tensor relu(const Tensor& x) { return ops::unary(OpId::Relu, x, {}, {}, {}); }
Tensor gelu(const Tensor& x) { return ops::unary(OpId::Gelu, x, {}, {}, {}); }
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  if (!min && !max) throw ValueError("[locus::clamp] at least one of min and max must be given");
  return ops::unary(OpId::Clamp, x, min, max, {});
}
Tensor& relu_out(Tensor& out, const Tensor& x) { ops::unary(OpId::Relu, x, {}, {}, out); return out; }

#define LOCUS_COMPARISON(fn, id)                                                                             \
  Tensor fn(const Tensor& a, const Tensor& b) { return ops::binary(OpId::id, a, b, 1, {}); }                 \
  Tensor fn(const Tensor& a, const Scalar& b) { return ops::binary_scalar(OpId::id, a, b, 1, {}); }
LOCUS_COMPARISON(eq, Eq)
LOCUS_COMPARISON(ne, Ne)
LOCUS_COMPARISON(lt, Lt)
LOCUS_COMPARISON(le, Le)
LOCUS_COMPARISON(gt, Gt)
LOCUS_COMPARISON(ge, Ge)
#undef LOCUS_COMPARISON

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  const Device device = ops::common_device(OpId::Where, {{condition, "condition"}, {a, "self"}, {b, "other"}});
  if (condition.dtype() != DType::Bool)
    throw DTypeError("[locus::where] condition must be a bool tensor, got " + std::string(dtype_name(condition.dtype())));
  const DType dtype = result_type(a, b);
  const Shape shape = ops::broadcast_shapes(condition.shape(), ops::broadcast_shapes(a.shape(), b.shape(), OpId::Where), OpId::Where);
  const ops::KernelTable* k = ops::kernels_for(OpId::Where, device, dtype);
  if (!k) return where(condition.cpu(), a.cpu(), b.cpu()).to(device);
  const Tensor c = condition.device() == device ? condition : condition.to(device);
  const Tensor ca = (a.device() == device ? a : a.to(device)).to(dtype);
  const Tensor cb = (b.device() == device ? b : b.to(device)).to(dtype);
  Tensor out = ops::empty_on(shape, dtype, device);
  for (const Tensor* t : {&c, &ca, &cb}) ops::wait_for_host(*t);
  k->where(ops::make_iter(out, {&c, &ca, &cb}));
  if (is_floating_point(dtype) && autograd::needs_grad({&a, &b})) autograd::record_where(condition, a, b, out);
  return out;
}

}  // namespace locus
