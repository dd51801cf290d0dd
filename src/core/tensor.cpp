// Tensor's handle rules and host access: what a tensor is, without running any op.

#include "locus/tensor.h"

#include <string>

#include "locus/errors.h"
#include "locus/factories.h"

namespace locus {

void Tensor::throw_undefined() {
  throw ValueError("this Tensor is undefined (default-constructed); create it with a factory such as zeros() first");
}

void Tensor::check_accessor(DType expected, size_t dims) const {
  if (dtype() != expected)
    throw DTypeError("accessor: the tensor is " + std::string(dtype_name(dtype())) + ", the accessor's type is " +
                     std::string(dtype_name(expected)));
  if (static_cast<size_t>(dim()) != dims)
    throw ShapeError("accessor: the tensor has " + std::to_string(dim()) + " dims, the accessor " + std::to_string(dims));
  if (!device().is_cpu())
    throw ValueError("accessor: the tensor is on " + device().str() +
                     "; an accessor reads host memory, so move it with .cpu() first");
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
HostValues<T> Tensor::tolist() const {
  const Tensor host = detach().to(Device(DeviceType::CPU), dtype_of<T>()).contiguous();
  return HostValues<T>{shape(), host.to_vector<T>()};
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
  template HostValues<T> Tensor::tolist<T>() const;     \
  template T* Tensor::data_ptr<T>() const;
LOCUS_INSTANTIATE(bool)
LOCUS_INSTANTIATE(uint8_t)
LOCUS_INSTANTIATE(int8_t)
LOCUS_INSTANTIATE(int16_t)
LOCUS_INSTANTIATE(int32_t)
LOCUS_INSTANTIATE(int64_t)
LOCUS_INSTANTIATE(Half)
LOCUS_INSTANTIATE(BFloat16)
LOCUS_INSTANTIATE(float)
LOCUS_INSTANTIATE(double)
#undef LOCUS_INSTANTIATE

}  // namespace locus
