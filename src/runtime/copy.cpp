// copy_ and to(): moves between devices and dtypes.

#include <sstream>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/ops/dispatch.h"
#include "src/ops/strided_iter.h"
#include "src/runtime/device_runtime.h"

namespace locus {
namespace {

using ops::OpId;

// Copies within one device, converting dtype and broadcasting src to dst's shape.
void copy_same_device(Tensor& dst, const Tensor& src) {
  const ops::KernelTable* k = ops::kernels_for(OpId::Copy, dst.device(), dst.dtype());
  if (!k) {
    Tensor host = dst.cpu();
    host.copy_(src.cpu());
    dst.copy_(host);
    return;
  }
  ops::wait_for_host(src);
  ops::wait_for_host(dst);
  k->copy(ops::make_iter(dst, {&src}));
}

// Moves the bytes of a contiguous tensor to a contiguous tensor of the same dtype and shape
// on another device.
void copy_bytes_between(Tensor& dst, const Tensor& src, bool non_blocking) {
  const Device sd = src.device(), dd = dst.device();
  const size_t n = dst.nbytes();
  if (!sd.is_cpu() && !dd.is_cpu() && sd.type() != dd.type()) {
    // Two different accelerator types (sim <-> cuda): through host memory.
    Tensor staging = empty(dst.shape(), TensorOptions().dtype(dst.dtype()));
    copy_bytes_between(staging, src, false);
    copy_bytes_between(dst, staging, false);
    return;
  }
  runtime::DeviceRuntime& rt = runtime::runtime(sd.is_cpu() ? dd.type() : sd.type());
  // A pending write into src must land before it is read; one into dst before it is overwritten.
  src.impl()->storage()->wait_for_pending_write();
  dst.impl()->storage()->wait_for_pending_write();
  auto pending = rt.copy_bytes(dst.data_ptr(), dd, src.data_ptr(), sd, n, non_blocking);
  dst.impl()->storage()->set_pending_write(std::move(pending));
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  const Shape shape = ops::broadcast_shapes(this->shape(), src.shape(), OpId::Copy);
  if (!(shape == this->shape())) {
    std::ostringstream os;
    os << "[locus::copy_] source of shape " << src.shape() << " cannot be broadcast to the destination shape " << this->shape();
    throw ShapeError(os.str());
  }
  if (device() == src.device()) {
    copy_same_device(*this, src);
    return *this;
  }
  if (numel() == 0) return *this;
  // Convert and lay out on the source side (fewer bytes cross when narrowing), then move bytes.
  Tensor staged = src.to(dtype()).expand(this->shape()).contiguous();
  if (is_contiguous()) {
    copy_bytes_between(*this, staged, non_blocking);
  } else {
    Tensor tmp = empty(this->shape(), TensorOptions().dtype(dtype()).device(device()));
    copy_bytes_between(tmp, staged, false);
    copy_same_device(*this, tmp);
  }
  return *this;
}

Tensor Tensor::to(Device device, DType dtype, bool non_blocking, bool copy) const {
  const Device target = runtime::resolve_device(device);
  if (target == this->device() && dtype == this->dtype() && !copy) return *this;
  Tensor out = empty(shape(), TensorOptions().dtype(dtype).device(target));
  out.copy_(*this, non_blocking);
  if (requires_grad() && locus::is_floating_point(dtype)) out.impl()->set_requires_grad(true);
  return out;
}

Tensor Tensor::to(Device device, bool non_blocking, bool copy) const { return to(device, dtype(), non_blocking, copy); }
Tensor Tensor::to(DType dtype, bool non_blocking, bool copy) const { return to(device(), dtype, non_blocking, copy); }
Tensor Tensor::to(const Tensor& other, bool non_blocking, bool copy) const {
  return to(other.device(), other.dtype(), non_blocking, copy);
}
Tensor Tensor::cuda(int index, bool non_blocking) const { return to(Device(DeviceType::CUDA, index), non_blocking); }
Tensor Tensor::cpu() const { return to(Device(DeviceType::CPU)); }

Tensor Tensor::pin_memory() const {
  if (!is_cpu())
    throw ValueError("pin_memory: only CPU tensors can be pinned, but this tensor is on " + device().str());
  if (is_pinned()) return *this;
  const size_t bytes = nbytes();
  auto storage = detail::make_intrusive<detail::Storage>(runtime::pinned_allocator().allocate(bytes), bytes, true);
  Shape strides(shape().size(), 1);
  for (size_t i = shape().size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(shape()[i], 1);
  Tensor out(detail::make_intrusive<detail::TensorImpl>(std::move(storage), dtype(), shape(), std::move(strides), 0));
  out.copy_(*this);
  if (requires_grad()) out.impl()->set_requires_grad(true);
  return out;
}

}  // namespace locus
