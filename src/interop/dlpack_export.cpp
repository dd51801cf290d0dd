// Export: a DLPack struct that views a tensor's memory and keeps it alive until the consumer
// calls the deleter (Note [DLPack lifetimes] in dlpack_import.cpp).

#include <string>

#include "locus/dlpack.h"
#include "locus/errors.h"
#include "locus/stream.h"
#include "src/interop/dlpack_format.h"

namespace locus {
namespace {

// Everything the consumer holds, in one allocation that the deleter frees: the struct, the
// storage (so the memory outlives every Locus tensor if need be), and the shape and strides its
// DLTensor points into. The storage rather than the tensor is kept: the tensor's handle may be
// pointed at other memory later (set_data), and the consumer's memory must stay regardless.
template <class Managed>
struct Export {
  Managed managed{};
  detail::intrusive_ptr<detail::Storage> storage;
  Shape shape, strides;
};

void delete_versioned(DLManagedTensorVersioned* self) {
  if (self) delete static_cast<Export<DLManagedTensorVersioned>*>(self->manager_ctx);
}
void delete_legacy(DLManagedTensor* self) {
  if (self) delete static_cast<Export<DLManagedTensor>*>(self->manager_ctx);
}

// The checks and waits both struct kinds share; returns the DLPack device.
DLDevice prepare(const Tensor& t, std::string_view op) {
  const std::string prefix = "[locus::" + std::string(op) + "] ";
  if (!t.defined()) throw ValueError(prefix + "the tensor is undefined (default-constructed); nothing to export");
  // A consumer's writes would bypass autograd, as PyTorch says.
  if (t.requires_grad())
    throw ValueError(prefix + "can't export a tensor that requires grad, since the consumer's reads and writes would "
                              "bypass autograd; export t.detach() instead");
  const DLDevice device = interop::to_dl_device(t.device(), op);
  // The consumer reads and writes at once: a non-blocking copy into or out of this memory lands
  // first (Note [Host reads wait]), and on cuda the work queued so far on the current stream,
  // since the consumer may use any stream and a struct carries none.
  t.impl()->storage()->wait_for_pending_work();
  if (t.is_cuda()) cuda::current_stream(t.device().index()).synchronize();
  return device;
}

template <class Managed>
Export<Managed>* make_export(const Tensor& t, DLDevice device) {
  auto* e = new Export<Managed>;
  e->storage = t.impl()->storage();
  e->shape = t.shape();
  e->strides = t.strides();
  DLTensor& dl = e->managed.dl_tensor;
  // The first element, with byte_offset 0, as PyTorch, NumPy and CuPy export: consumers that
  // ignore byte_offset exist, and none mishandles a zero one. DLPack asks for a null pointer
  // when there are no elements.
  dl.data = t.numel() ? t.data_ptr() : nullptr;
  dl.device = device;
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = interop::to_dl_dtype(t.dtype());
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();  // elements, as in Locus
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  return e;
}

}  // namespace

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& tensor) {
  const DLDevice device = prepare(tensor, "to_dlpack_versioned");
  Export<DLManagedTensorVersioned>* e = make_export<DLManagedTensorVersioned>(tensor, device);
  e->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  e->managed.flags = e->storage->read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  e->managed.deleter = &delete_versioned;
  return &e->managed;
}

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  const DLDevice device = prepare(tensor, "to_dlpack");
  if (tensor.impl()->storage()->read_only())
    throw ValueError("[locus::to_dlpack] the tensor's memory is read-only (imported through DLPack with the read-only "
                     "flag), and the legacy DLManagedTensor cannot say so; use to_dlpack_versioned(), which carries the "
                     "flag, or export a writable copy: to_dlpack(t.clone())");
  Export<DLManagedTensor>* e = make_export<DLManagedTensor>(tensor, device);
  e->managed.deleter = &delete_legacy;
  return &e->managed;
}

}  // namespace locus
