// Tensor's host-access rules and its methods that forward to the free functions.

#include "locus/tensor.h"

#include <string>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include <cmath>
#include "src/ops/elementwise.h"

namespace locus {

void Tensor::throw_undefined() {
  throw ValueError("this Tensor is undefined (default-constructed); create it with a factory such as zeros() first");
}

bool Tensor::shares_storage(const Tensor& other) const noexcept {
  return defined() && other.defined() && impl_->storage() == other.impl_->storage();
}

Tensor& Tensor::requires_grad_(bool r) {
  if (r && !is_floating_point())
    throw DTypeError("only tensors of floating dtype can require gradients, but this tensor is " + std::string(dtype_name(dtype())));
  impl()->set_requires_grad(r);
  return *this;
}

template <class T>
T Tensor::item() const {
  if (numel() != 1)
    throw ValueError("a Tensor with " + std::to_string(numel()) + " elements cannot be converted to a scalar (item() needs exactly one)");
  const Tensor host = cpu().to(dtype_of<T>());
  host.impl()->storage()->wait_for_pending_work();
  return *static_cast<const T*>(host.data_ptr());
}

Scalar Tensor::item() const {
  switch (dtype()) {
    case DType::Bool: return item<bool>();
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64: return item<double>();
    default: return item<int64_t>();
  }
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (!is_cpu())
    throw ValueError("to_vector() needs a CPU tensor, but this tensor is on " + device().str() +
                     ": call .cpu() first (e.g. t.cpu().to_vector<float>())");
  if (requires_grad())
    throw ValueError("to_vector() cannot read a tensor that requires grad: call .detach() first (e.g. t.detach().cpu().to_vector<float>())");
  if (dtype() != dtype_of<T>())
    throw DTypeError("to_vector<" + std::string(dtype_name(dtype_of<T>())) + ">() called on a " +
                     std::string(dtype_name(dtype())) + " tensor; convert with .to(k...) first");
  const Tensor c = contiguous();
  c.impl()->storage()->wait_for_pending_work();
  const T* p = static_cast<const T*>(c.data_ptr());
  return std::vector<T>(p, p + numel());
}

template <class T>
T* Tensor::data_ptr() const {
  if (dtype() != dtype_of<T>())
    throw DTypeError("data_ptr<" + std::string(dtype_name(dtype_of<T>())) + ">() called on a " + std::string(dtype_name(dtype())) + " tensor");
  // Handing the host a pointer is a host access: a non-blocking copy into or out of this
  // memory lands first (Note [Host reads wait]).
  impl()->storage()->wait_for_pending_work();
  return static_cast<T*>(impl()->data());
}

#define LOCUS_INSTANTIATE(T)                        \
  template T Tensor::item<T>() const;               \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T* Tensor::data_ptr<T>() const;
LOCUS_INSTANTIATE(bool)
LOCUS_INSTANTIATE(uint8_t)
LOCUS_INSTANTIATE(int8_t)
LOCUS_INSTANTIATE(int32_t)
LOCUS_INSTANTIATE(int64_t)
LOCUS_INSTANTIATE(Half)
LOCUS_INSTANTIATE(BFloat16)
LOCUS_INSTANTIATE(float)
LOCUS_INSTANTIATE(double)
#undef LOCUS_INSTANTIATE

using ops::OpId;

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return locus::add(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o) const { return locus::add(*this, o); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return locus::sub(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o) const { return locus::sub(*this, o); }
Tensor Tensor::mul(const Tensor& o) const { return locus::mul(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return locus::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return locus::div(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return locus::div(*this, o); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) { ops::binary(OpId::Add, *this, o, alpha, *this); return *this; }
Tensor& Tensor::add_(const Scalar& o) { ops::binary_scalar(OpId::Add, *this, o, 1, *this); return *this; }
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) { ops::binary(OpId::Sub, *this, o, alpha, *this); return *this; }
Tensor& Tensor::sub_(const Scalar& o) { ops::binary_scalar(OpId::Sub, *this, o, 1, *this); return *this; }
Tensor& Tensor::mul_(const Tensor& o) { ops::binary(OpId::Mul, *this, o, 1, *this); return *this; }
Tensor& Tensor::mul_(const Scalar& o) { ops::binary_scalar(OpId::Mul, *this, o, 1, *this); return *this; }
Tensor& Tensor::div_(const Tensor& o) { ops::binary(OpId::Div, *this, o, 1, *this); return *this; }
Tensor& Tensor::div_(const Scalar& o) { ops::binary_scalar(OpId::Div, *this, o, 1, *this); return *this; }
Tensor Tensor::pow(const Tensor& e) const { return locus::pow(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return locus::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return locus::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return locus::minimum(*this, o); }
Tensor Tensor::neg() const { return locus::neg(*this); }
Tensor Tensor::abs() const { return locus::abs(*this); }
Tensor Tensor::exp() const { return locus::exp(*this); }
Tensor Tensor::log() const { return locus::log(*this); }
Tensor Tensor::sqrt() const { return locus::sqrt(*this); }
Tensor Tensor::tanh() const { return locus::tanh(*this); }
Tensor Tensor::sigmoid() const { return locus::sigmoid(*this); }
Tensor Tensor::relu() const { return locus::relu(*this); }
Tensor Tensor::gelu() const { return locus::gelu(*this); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return locus::clamp(*this, min, max); }
Tensor& Tensor::neg_() { ops::unary(OpId::Neg, *this, {}, {}, *this); return *this; }
Tensor& Tensor::abs_() { ops::unary(OpId::Abs, *this, {}, {}, *this); return *this; }
Tensor& Tensor::exp_() { ops::unary(OpId::Exp, *this, {}, {}, *this); return *this; }
Tensor& Tensor::log_() { ops::unary(OpId::Log, *this, {}, {}, *this); return *this; }
Tensor& Tensor::sqrt_() { ops::unary(OpId::Sqrt, *this, {}, {}, *this); return *this; }
Tensor& Tensor::tanh_() { ops::unary(OpId::Tanh, *this, {}, {}, *this); return *this; }
Tensor& Tensor::sigmoid_() { ops::unary(OpId::Sigmoid, *this, {}, {}, *this); return *this; }
Tensor& Tensor::relu_() { ops::unary(OpId::Relu, *this, {}, {}, *this); return *this; }
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  if (!min && !max) throw ValueError("[locus::clamp] at least one of min and max must be given");
  ops::unary(OpId::Clamp, *this, min, max, *this);
  return *this;
}
Tensor Tensor::eq(const Tensor& o) const { return locus::eq(*this, o); }
Tensor Tensor::eq(const Scalar& o) const { return locus::eq(*this, o); }
Tensor Tensor::ne(const Tensor& o) const { return locus::ne(*this, o); }
Tensor Tensor::ne(const Scalar& o) const { return locus::ne(*this, o); }
Tensor Tensor::lt(const Tensor& o) const { return locus::lt(*this, o); }
Tensor Tensor::lt(const Scalar& o) const { return locus::lt(*this, o); }
Tensor Tensor::le(const Tensor& o) const { return locus::le(*this, o); }
Tensor Tensor::le(const Scalar& o) const { return locus::le(*this, o); }
Tensor Tensor::gt(const Tensor& o) const { return locus::gt(*this, o); }
Tensor Tensor::gt(const Scalar& o) const { return locus::gt(*this, o); }
Tensor Tensor::ge(const Tensor& o) const { return locus::ge(*this, o); }
Tensor Tensor::ge(const Scalar& o) const { return locus::ge(*this, o); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const { return locus::where(condition, *this, other); }
Tensor Tensor::sum(std::optional<DType> dtype) const { return locus::sum(*this, dtype); }
Tensor Tensor::sum(const Shape& dims, bool keepdim, std::optional<DType> dtype) const { return locus::sum(*this, dims, keepdim, dtype); }
Tensor Tensor::mean() const { return locus::mean(*this); }
Tensor Tensor::mean(const Shape& dims, bool keepdim) const { return locus::mean(*this, dims, keepdim); }
Tensor Tensor::max() const { return locus::max(*this); }
Tensor Tensor::min() const { return locus::min(*this); }
ValuesIndices Tensor::max(int64_t dim, bool keepdim) const { return locus::max(*this, dim, keepdim); }
ValuesIndices Tensor::min(int64_t dim, bool keepdim) const { return locus::min(*this, dim, keepdim); }
Tensor Tensor::argmax() const { return locus::argmax(*this); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return locus::argmax(*this, dim, keepdim); }
Tensor Tensor::softmax(int64_t dim) const { return locus::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return locus::log_softmax(*this, dim); }
Tensor Tensor::matmul(const Tensor& o) const { return locus::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return locus::mm(*this, o); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return locus::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return locus::gather(*this, dim, index); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return add(neg(b), a); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(full_like(b, a, b.dtype()), b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (!(a.shape() == b.shape())) return false;
  const std::vector<double> va = a.detach().cpu().to(kFloat64).contiguous().to_vector<double>();
  const std::vector<double> vb = b.detach().cpu().to(kFloat64).contiguous().to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i)
    if (!(std::abs(va[i] - vb[i]) <= atol + rtol * std::abs(vb[i]))) return false;
  return true;
}

bool equal(const Tensor& a, const Tensor& b) {
  if (!(a.shape() == b.shape()) || a.dtype() != b.dtype()) return false;
  const std::vector<double> va = a.detach().cpu().to(kFloat64).to_vector<double>();
  const std::vector<double> vb = b.detach().cpu().to(kFloat64).to_vector<double>();
  return va == vb;
}

}  // namespace locus
