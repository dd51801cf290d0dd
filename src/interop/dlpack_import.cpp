// Import: a tensor over memory another library lent through DLPack, without copying.

// Note [DLPack lifetimes]
// Export (dlpack_export.cpp): the struct holds a reference to the tensor's Storage, which the
// consumer's deleter call drops. The memory stays Locus's (its allocator's, counted in the
// memory statistics as before) until both the consumer and every Locus tensor are done with it.
// Import (here): the producer's memory becomes a Storage whose DataPtr deleter calls the
// producer's deleter, exactly once, when the last Locus tensor viewing it dies (views, detach()
// and re-exports share that Storage). It is not Locus's allocation: the memory statistics do not
// count it, and allocators never see it (record_stream passes over it). On an asynchronous
// device, Locus work queued on the current stream may still use the memory when the last tensor
// dies, while the producer may reuse it as soon as its deleter returns, in an order Locus's
// streams know nothing of; so the release first waits for that work. It polls an event rather
// than synchronizing, because a synchronization raises a failed deferred check (Note [Deferred
// checks]), which inside a destructor could only be lost; the failure stays for the user's next
// synchronization. Work the user queued on other streams is the user's to wait for, as with
// any memory shared between streams.
// Until the tensor exists nothing is taken: a throw leaves the struct, and the duty to call its
// deleter, with the caller (a Python capsule keeps it until renamed "used_dltensor").

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <thread>

#include "locus/dlpack.h"
#include "locus/errors.h"
#include "src/core/shape_check.h"
#include "src/interop/dlpack_format.h"
#include "src/runtime/device_runtime.h"
#include "src/runtime/stream_runtime.h"

namespace locus {
namespace {

constexpr std::string_view kOp = "from_dlpack";
const std::string kPrefix = "[locus::from_dlpack] ";

// What the Storage's DataPtr carries for lent memory.
struct Lent {
  void* managed;                   // the producer's struct
  void (*call_deleter)(void*);     // calls its deleter
  Device device;
  bool owned = false;              // true once the tensor exists (see the Note)
};

template <class Managed>
void call_deleter(void* m) {
  auto* managed = static_cast<Managed*>(m);
  if (managed->deleter) managed->deleter(managed);
}

// Waits until the work queued so far on the calling thread's current stream of `device` has
// finished, without raising a deferred check failure (Note [DLPack lifetimes]).
void wait_for_queued_work(Device device) noexcept {
  runtime::DeviceRuntime* rt = runtime::find_runtime(device.type());
  runtime::StreamRuntime* streams = rt ? rt->streams() : nullptr;
  if (!streams) return;
  void* event = nullptr;
  try {
    event = streams->event_create(device.index(), false);
    streams->event_record(event, streams->current_stream(device.index()));
    for (int polls = 0; !streams->event_query(event); ++polls) {
      if (polls < 100) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  } catch (...) {
    // A failing device (a sticky CUDA error) runs no more work: nothing is left to wait for.
  }
  if (event) streams->event_destroy(event);
}

void release_lent(void* ctx, void*) noexcept {
  auto* lent = static_cast<Lent*>(ctx);
  if (lent->owned) {
    if (!lent->device.is_cpu()) wait_for_queued_work(lent->device);
    lent->call_deleter(lent->managed);
  }
  delete lent;
}

// Sizes and strides in elements, validated, and the elements the strides span from the first.
struct Geometry {
  Shape sizes, strides;
  int64_t numel = 0;
  int64_t extent = 0;
};

Geometry read_geometry(const DLTensor& dl, size_t itemsize) {
  if (dl.ndim < 0) throw ValueError(kPrefix + "ndim is " + std::to_string(dl.ndim) + "; it must be 0 or more");
  const auto ndim = static_cast<size_t>(dl.ndim);
  if (ndim > 0 && !dl.shape) throw ValueError(kPrefix + "shape is null for a tensor of " + std::to_string(ndim) + " dims");
  Geometry g;
  g.sizes = Shape(std::span<const int64_t>(dl.shape, ndim));
  g.numel = detail::checked_numel(g.sizes, itemsize, kOp);  // ShapeError for a negative size
  Shape contiguous(ndim, 1);
  for (size_t i = ndim; i-- > 1;) contiguous[i - 1] = contiguous[i] * std::max<int64_t>(g.sizes[i], 1);
  // Null strides mean row-major (DLPack); without elements, no stride addresses anything.
  g.strides = dl.strides && g.numel ? Shape(std::span<const int64_t>(dl.strides, ndim)) : contiguous;
  g.extent = g.numel ? 1 : 0;
  for (size_t i = 0; g.numel && i < ndim; ++i) {
    if (g.sizes[i] == 1) {
      if (g.strides[i] < 0) g.strides[i] = contiguous[i];  // a dim of one element steps nowhere
      continue;
    }
    if (g.strides[i] < 0)
      throw ShapeError(kPrefix + "stride " + std::to_string(g.strides[i]) + " of dim " + std::to_string(i) +
                       " is negative, and Locus tensors have non-negative strides; import a copy in the "
                       "producer's order (numpy.ascontiguousarray, say)");
    int64_t reach = 0;
    if (__builtin_mul_overflow(g.sizes[i] - 1, g.strides[i], &reach) || __builtin_add_overflow(g.extent, reach, &g.extent))
      throw ShapeError(kPrefix + "the strides reach past what int64 can address");
  }
  return g;
}

// Where the Storage begins, the tensor's offset into it (elements) and the Storage's size.
struct Placement {
  void* start = nullptr;
  int64_t offset = 0;
  size_t nbytes = 0;
};

Placement place(const DLTensor& dl, const Geometry& g, size_t itemsize) {
  Placement p;
  p.start = dl.data;
  if (g.numel == 0) return p;  // nothing addressed: data may be null, byte_offset is moot
  if (!dl.data) throw ValueError(kPrefix + "data is null for a tensor of " + std::to_string(g.numel) + " elements");
  const uint64_t byte_offset = dl.byte_offset;
  const auto first = reinterpret_cast<uintptr_t>(dl.data) + byte_offset;
  if (first % itemsize != 0)
    throw ValueError(kPrefix + "the first element (data + byte_offset) is not aligned to its " +
                     std::to_string(itemsize) + "-byte elements; Locus kernels read whole elements: import an aligned copy");
  // An offset in whole elements stays the tensor's storage offset (the producer's base pointer
  // stays the Storage's); any other offset moves the Storage's start instead.
  if (byte_offset > static_cast<uint64_t>(INT64_MAX))
    throw ShapeError(kPrefix + "byte_offset " + std::to_string(byte_offset) + " is past what int64 can address");
  if (byte_offset % itemsize == 0) {
    p.offset = static_cast<int64_t>(byte_offset / itemsize);
  } else {
    p.start = static_cast<char*>(dl.data) + byte_offset;
  }
  int64_t elements = 0;
  if (__builtin_add_overflow(p.offset, g.extent, &elements) || elements > INT64_MAX / static_cast<int64_t>(itemsize))
    throw ShapeError(kPrefix + "byte_offset " + std::to_string(byte_offset) + " plus the strides reach past what int64 can address");
  p.nbytes = static_cast<size_t>(elements) * itemsize;
  return p;
}

Tensor wrap(const DLTensor& dl, bool read_only, void* managed, void (*deleter)(void*)) {
  const DType dtype = interop::from_dl_dtype(dl.dtype, kOp);
  const Device device = interop::from_dl_device(dl.device, kOp);
  const size_t size = itemsize(dtype);
  Geometry g = read_geometry(dl, size);
  const Placement p = place(dl, g, size);
  auto* lent = new Lent{managed, deleter, device};
  // From here only an allocation can fail, and then release_lent only frees `lent`.
  detail::DataPtr data(p.start, lent, &release_lent, device);
  auto storage = detail::make_intrusive<detail::Storage>(std::move(data), p.nbytes);
  if (read_only) storage->set_read_only();
  Tensor t(detail::make_intrusive<detail::TensorImpl>(std::move(storage), dtype, std::move(g.sizes), std::move(g.strides),
                                                      p.offset));
  lent->owned = true;
  return t;
}

}  // namespace

Tensor from_dlpack(DLManagedTensorVersioned* managed) {
  if (!managed) throw ValueError(kPrefix + "the DLManagedTensorVersioned pointer is null");
  // Another major version may lay the struct out differently: only its deleter is safe to use.
  if (managed->version.major != DLPACK_MAJOR_VERSION)
    throw ValueError(kPrefix + "the tensor is DLPack " + std::to_string(managed->version.major) + "." +
                     std::to_string(managed->version.minor) + ", and Locus reads DLPack " +
                     std::to_string(DLPACK_MAJOR_VERSION) + ".x; the caller keeps the struct and must call its deleter");
  const bool read_only = (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  return wrap(managed->dl_tensor, read_only, managed, &call_deleter<DLManagedTensorVersioned>);
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (!managed) throw ValueError(kPrefix + "the DLManagedTensor pointer is null");
  return wrap(managed->dl_tensor, /*read_only=*/false, managed, &call_deleter<DLManagedTensor>);
}

}  // namespace locus
