// lerp, addcmul and addcdiv (elementwise.h): ops of three tensors, composed from the op table's
// binary ops, so they run on every device and their gradients come from those ops' derivatives.
//
// Note [Ternary pointwise precision]
// PyTorch computes these in one pass in the "opmath" type (float32 for float16 and bfloat16)
// and rounds once: bfloat16 addcmul is NOT bfloat16 arithmetic step by step (that differs from
// PyTorch in a fifth of the elements). So a 16-bit call runs on float32 copies and rounds its
// result back, and the order of the products follows PyTorch's kernels: self + (value * t1) * t2,
// self + (value * t1) / t2, and lerp from `end` when |weight| >= 0.5.

#include <cmath>
#include <sstream>
#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/ops/public_op.h"
#include "src/ops/type_promotion.h"

namespace locus {
namespace {

bool is_16_bit(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

// The dtype the arithmetic runs in (Note [Ternary pointwise precision]).
DType opmath(DType d) { return is_16_bit(d) ? DType::Float32 : d; }

Tensor as(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }

// PyTorch's lerp wants start, end and weight in one floating dtype, without promotion.
void check_lerp_dtypes(const Tensor& start, const Tensor& end, const Tensor* weight) {
  const DType d = start.dtype();
  if (!is_floating_point(d))
    throw DTypeError(detail::error_prefix("lerp") + "needs a floating dtype, got " + std::string(dtype_name(d)) +
                     "; convert with .to(kFloat32) first");
  auto same = [&](const Tensor& t, const char* name) {
    if (t.dtype() != d)
      throw DTypeError(detail::error_prefix("lerp") + "expected dtype " + std::string(dtype_name(d)) + " for `" + name +
                       "` but got dtype " + std::string(dtype_name(t.dtype())));
  };
  same(end, "end");
  if (weight) same(*weight, "weight");
}

// The dtype addcmul / addcdiv compute in: the three tensors promoted together.
DType common_dtype(const Tensor& self, const Tensor& t1, const Tensor& t2) {
  const Tensor* tensors[3] = {&self, &t1, &t2};
  return ops::promote_operands(tensors, 3, nullptr, 0);
}

// An integer result takes `value` as an integer, as PyTorch converts it to the tensors' dtype:
// truncated, and a ValueError where PyTorch's checked conversion overflows (a float below the
// type's lowest value before truncation, so -0.75 does not fit uint8; NaN fits no integer).
Scalar value_for(DType d, const Scalar& value, const char* name) {
  if (is_floating_point(d) || !value.is_floating_point()) return value;
  struct Limits {
    double lowest, max;
    const char* type;
  };
  const Limits l = d == DType::UInt8  ? Limits{0.0, 255.0, "uint8_t"}
                   : d == DType::Int8  ? Limits{-128.0, 127.0, "int8_t"}
                   : d == DType::Int16 ? Limits{-32768.0, 32767.0, "int16_t"}
                   : d == DType::Int32 ? Limits{-2147483648.0, 2147483647.0, "int32_t"}
                                       : Limits{-9223372036854775808.0, 9223372036854775807.0, "int64_t"};
  const double v = value.to_double();
  if (!(v >= l.lowest && v <= l.max))
    throw ValueError(detail::error_prefix(name) + "value cannot be converted to type " + l.type + " without overflow");
  return Scalar(value.to_int64());
}

// What an in-place form checks before writing its result into self: what the op path checks
// for its in-place forms (Note [Op path], step 4).
void check_inplace(const Tensor& self, const Tensor& result, const char* name) {
  if (!(result.shape() == self.shape())) {
    std::ostringstream os;
    os << detail::error_prefix(name) << "output with shape " << self.shape() << " doesn't match the broadcast shape "
       << result.shape();
    throw ShapeError(os.str());
  }
  const DType from = result.dtype(), to = self.dtype();
  if ((is_floating_point(from) && !is_floating_point(to)) || (from != DType::Bool && to == DType::Bool))
    throw DTypeError(detail::error_prefix(name) + "result type " + std::string(dtype_name(from)) +
                     " can't be cast to the desired output type " + std::string(dtype_name(to)));
}

// Computes the out-of-place result, checks it against self, writes it in; recorded when an
// operand is in the graph (Note [In-place ops in the graph]).
template <class F>
Tensor& write_inplace(Tensor& self, const char* name, std::initializer_list<const Tensor*> inputs, F compute) {
  if (autograd::record_in_place(self, name, inputs, [&] {
        Tensor r = compute();
        check_inplace(self, r, name);
        return r;
      }))
    return self;
  NoGradGuard no_grad;
  const Tensor r = compute();
  check_inplace(self, r, name);
  self.copy_(r);
  return self;
}

}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight) {
  const ops::PublicOp op("lerp", {{start, "self"}, {end, "end"}}, ops::CpuScalars::Join);
  check_lerp_dtypes(start, end, nullptr);
  const DType d = opmath(start.dtype());
  const Tensor s = as(start, d), e = as(end, d);
  // The weight and 1 - weight as the compute type holds them (PyTorch's opmath scalars).
  const double w = d == DType::Float64 ? weight.to_double() : static_cast<double>(weight.to<float>());
  const double rest = d == DType::Float64 ? 1.0 - w : static_cast<double>(1.0f - static_cast<float>(w));
  const Tensor diff = e - s;
  const Tensor r = std::abs(w) < 0.5 ? s + diff * w : e - diff * rest;
  return as(r, start.dtype());
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  const ops::PublicOp op("lerp", {{start, "self"}, {end, "end"}, {weight, "weight"}}, ops::CpuScalars::Join);
  check_lerp_dtypes(start, end, &weight);
  const DType d = opmath(start.dtype());
  const Tensor s = as(start, d), e = as(end, d), w = as(weight, d);
  const Tensor diff = e - s;
  const Tensor r = where(abs(w) < 0.5, s + w * diff, e - diff * (1 - w));
  return as(r, start.dtype());
}

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  const ops::PublicOp op("addcmul", {{self, "self"}, {tensor1, "tensor1"}, {tensor2, "tensor2"}},
                         ops::CpuScalars::Join);
  const DType result = common_dtype(self, tensor1, tensor2);
  if (result == DType::Bool)
    throw DTypeError(detail::error_prefix("addcmul") + "is not supported for bool tensors; convert with .to(kInt64) first");
  const DType d = opmath(result);
  const Tensor r = as(self, d) + mul(as(tensor1, d), value_for(d, value, "addcmul")) * as(tensor2, d);
  return as(r, result);
}

Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  const ops::PublicOp op("addcdiv", {{self, "self"}, {tensor1, "tensor1"}, {tensor2, "tensor2"}},
                         ops::CpuScalars::Join);
  if (!is_floating_point(tensor1.dtype()) && !is_floating_point(tensor2.dtype()))
    throw DTypeError(detail::error_prefix("addcdiv") +
                     "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
                     "perform a true division of tensor1 and tensor2. Use self + value * tensor1 / tensor2 instead");
  const DType result = common_dtype(self, tensor1, tensor2);
  const DType d = opmath(result);
  const Tensor r = as(self, d) + div(mul(as(tensor1, d), value), as(tensor2, d));
  return as(r, result);
}

Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return locus::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return locus::lerp(*this, end, weight); }
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return locus::addcmul(*this, t1, t2, value);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, const Scalar& value) const {
  return locus::addcdiv(*this, t1, t2, value);
}

Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  return write_inplace(*this, "lerp_", {this, &end}, [&] { return locus::lerp(*this, end, weight); });
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  return write_inplace(*this, "lerp_", {this, &end, &weight}, [&] { return locus::lerp(*this, end, weight); });
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return write_inplace(*this, "addcmul_", {this, &t1, &t2}, [&] { return locus::addcmul(*this, t1, t2, value); });
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value) {
  return write_inplace(*this, "addcdiv_", {this, &t1, &t2}, [&] { return locus::addcdiv(*this, t1, t2, value); });
}

}  // namespace locus
