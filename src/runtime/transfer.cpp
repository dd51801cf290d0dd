// Moving the bytes of a tensor between devices.

#include "src/runtime/transfer.h"

#include "locus/factories.h"
#include "src/runtime/device_runtime.h"

namespace locus::runtime {

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
  DeviceRuntime& rt = runtime(sd.is_cpu() ? dd.type() : sd.type());
  detail::Storage* src_storage = src.impl()->storage().get();
  detail::Storage* dst_storage = dst.impl()->storage().get();
  // A copy into src must land before src is read (earlier copies from it may still run: reads do
  // not conflict); everything using dst must finish before it is overwritten.
  src_storage->wait_for_pending_writes();
  dst_storage->wait_for_pending_work();
  CopyRequest request;
  request.dst = dst.data_ptr(), request.dst_device = dd;
  request.src = src.data_ptr(), request.src_device = sd;
  request.n = n, request.non_blocking = non_blocking;
  if (src_storage->pinned()) request.pinned_block = &src_storage->data_ptr();
  else if (dst_storage->pinned()) request.pinned_block = &dst_storage->data_ptr();
  // Asynchronous work leaves its mark on the host side, which the host must not touch early.
  if (auto pending = rt.copy_bytes(request)) (sd.is_cpu() ? src_storage : dst_storage)->set_pending_work(std::move(pending));
}

}  // namespace locus::runtime
