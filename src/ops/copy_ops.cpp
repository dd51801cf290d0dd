// copy_ and to(): moves between devices and dtypes (the bytes cross in runtime/transfer.cpp).

#include <sstream>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/autograd.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/dispatch.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/strided_iter.h"
#include "src/runtime/device_runtime.h"
#include "src/runtime/transfer.h"

namespace locus {
namespace {

using ops::OpId;

// Copies within one device, converting dtype and broadcasting src to dst's shape.
void copy_same_device(Tensor& dst, const Tensor& src) {
  const ops::KernelTable* k = ops::kernels_for(OpId::Copy, dst.device(), dst.dtype());
  if (!k) {
    // The fallback of copy itself: convert on the CPU, then move the bytes (a cross-device
    // copy_, which needs no copy kernel), since run_on_cpu's way back is a copy.
    Tensor host = dst.cpu();
    host.copy_(src.cpu());
    dst.copy_(host);
    return;
  }
  ops::wait_for_host(src);
  ops::wait_for_host(dst);
  k->elementwise[static_cast<int>(OpId::Copy)](ops::make_iter(dst, {&src}), {});
}

// copy_ recorded (Note [In-place ops in the graph]): src's values in dst's shape, dtype and
// device, as a new tensor whose node sends the gradient back to src (PyTorch's CopyBackwards).
Tensor copied_with_history(const Tensor& dst, const Tensor& src) {
  Tensor fresh = empty(dst.shape(), TensorOptions().dtype(dst.dtype()).device(dst.device()));
  {
    NoGradGuard no_grad;
    fresh.copy_(src);
  }
  if (autograd::needs_grad({&src})) {
    const Shape shape = src.shape();
    const DType dtype = src.dtype();
    const Device device = src.device();
    autograd::record(fresh, "CopyBackwards", [=](const Tensor& g) -> std::vector<Tensor> {
      return {autograd::sum_to(g, shape, dtype).to(device)};
    }, {&src});
  }
  return fresh;
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  if (autograd::record_in_place(*this, "copy_", {&src}, [&] { return copied_with_history(*this, src); })) return *this;
  autograd::prepare_write(*this, "copy_");
  ops::require_distinct_elements(*this, ops::op_prefix(OpId::Copy));
  ops::require_no_partial_overlap(*this, src, ops::op_prefix(OpId::Copy));
  const Shape shape = ops::broadcast_shapes(this->shape(), src.shape(), OpId::Copy);
  if (!(shape == this->shape())) {
    std::ostringstream os;
    os << ops::op_prefix(OpId::Copy) << "source of shape " << src.shape() << " cannot be broadcast to the destination shape " << this->shape();
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
    runtime::copy_bytes_between(*this, staged, non_blocking);
  } else {
    Tensor tmp = empty(this->shape(), TensorOptions().dtype(dtype()).device(device()));
    runtime::copy_bytes_between(tmp, staged, false);
    copy_same_device(*this, tmp);
  }
  return *this;
}

Tensor Tensor::to(Device device, DType dtype, bool non_blocking, bool copy) const {
  const Device target = runtime::resolve_device(device);
  if (target == this->device() && dtype == this->dtype() && !copy) return *this;
  // A non-blocking copy to the host can only be asynchronous into page-locked memory.
  const bool pinned = non_blocking && target.is_cpu() && !this->device().is_cpu() &&
                      !runtime::runtime(this->device().type()).capabilities().host_addressable;
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
