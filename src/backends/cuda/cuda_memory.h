#pragma once
// The raw memory sources under Locus's caching allocators on CUDA machines: device memory from
// cudaMalloc and page-locked host memory from cudaHostAlloc, both with CUDA events so blocks
// used on other streams are reused only after that work is done.

#include <memory>

#include "src/runtime/raw_memory.h"

namespace locus::cuda_backend {

/// cudaMalloc / cudaFree on one device.
std::unique_ptr<runtime::RawMemory> make_device_memory(int device);
/// cudaHostAlloc (portable: usable from every device) / cudaFreeHost.
std::unique_ptr<runtime::RawMemory> make_pinned_memory();

}  // namespace locus::cuda_backend
