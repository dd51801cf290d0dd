// copy_ and to(): moves between devices and dtypes.

#include <sstream>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/autograd.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
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
  detail::Storage* src_storage = src.impl()->storage().get();
  detail::Storage* dst_storage = dst.impl()->storage().get();
  // Pending work on src must finish before it is read; on dst before it is overwritten.
  src_storage->wait_for_pending_work();
  dst_storage->wait_for_pending_work();
  runtime::CopyRequest request;
  request.dst = dst.data_ptr(), request.dst_device = dd;
  request.src = src.data_ptr(), request.src_device = sd;
  request.n = n, request.non_blocking = non_blocking;
  if (src_storage->pinned()) request.pinned_block = &src_storage->data_ptr();
  else if (dst_storage->pinned()) request.pinned_block = &dst_storage->data_ptr();
  // Asynchronous work leaves its mark on the host side, which the host must not touch early.
  if (auto pending = rt.copy_bytes(request)) (sd.is_cpu() ? src_storage : dst_storage)->set_pending_work(std::move(pending));
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  autograd::check_not_recording_into(*this, "copy_");
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
  // A non-blocking copy to the host can only be asynchronous into page-locked memory.
  const bool pinned = non_blocking && target.is_cpu() && !this->device().is_cpu() &&
                      !runtime::runtime(this->device().type()).host_addressable();
  Tensor out = ops::empty_on(shape(), dtype, target, pinned);
  {
    NoGradGuard no_grad;  // the move is the recorded op, not its internal conversions
    out.copy_(*this, non_blocking);
  }
  if (locus::is_floating_point(dtype) && autograd::needs_grad({this})) autograd::record_to(*this, out);
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
  Tensor out = ops::empty_on(shape(), dtype(), device(), true);
  {
    NoGradGuard no_grad;
    out.copy_(*this);
  }
  if (autograd::needs_grad({this})) autograd::record_to(*this, out);
  return out;
}

}  // namespace locus
