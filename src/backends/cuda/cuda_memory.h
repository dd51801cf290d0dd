#pragma once
// The raw memory sources under Locus's caching allocators on CUDA machines: device memory from
// cudaMalloc and page-locked host memory from cudaHostAlloc, both with CUDA events so blocks
// used on other streams are reused only after that work is done.

#include <memory>

#include "locus/detail/storage.h"
#include "src/runtime/raw_memory.h"

namespace locus::cuda_backend {

/// cudaMalloc / cudaFree on one device.
std::unique_ptr<runtime::RawMemory> make_device_memory(int device);
/// cudaHostAlloc (portable: usable from every device) / cudaFreeHost.
std::unique_ptr<runtime::RawMemory> make_pinned_memory();
/// Scratch memory on `device` from its caching allocator, owned by the thread's current stream
/// there, so kernels queued on that stream may use it even after it is freed.
detail::DataPtr device_scratch(int device, size_t bytes);

}  // namespace locus::cuda_backend
