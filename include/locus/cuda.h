#pragma once
/// \file cuda.h
/// CUDA discovery, current device and memory calls (`locus::cuda::*`), mirroring torch.cuda.
/// Discovery never throws and never creates a CUDA context.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string>
#include <utility>

#include "locus/device_properties.h"
#include "locus/memory.h"

namespace locus::cuda {

/// What get_device_properties reports (the generic struct every device type fills).
using DeviceProperties = locus::DeviceProperties;

/// True when Locus was built with CUDA and at least one device is usable.
bool is_available() noexcept;
/// Number of usable devices; 0 on any driver problem (see unavailable_reason()).
int device_count() noexcept;
/// Why is_available() is false ("built without CUDA", "no NVIDIA driver found ..."); empty when
/// CUDA is available.
std::string unavailable_reason();
/// Device name, e.g. "NVIDIA H100 80GB HBM3". IndexError for a missing device,
/// BackendUnavailableError when CUDA is unavailable.
std::string get_device_name(int index = -1);
DeviceProperties get_device_properties(int index = -1);
/// CUDA driver and runtime versions as "13.0" strings (empty when unknown).
std::string driver_version();
std::string runtime_version();

/// The calling thread's current CUDA device (0 until set).
int current_device();
/// Sets the calling thread's current device. IndexError when it does not exist.
void set_device(int index);

// The memory calls of memory.h for `cuda:index` (the current device when -1). Without CUDA
// they answer as torch.cuda's do, so portable code needs no guard: 0 bytes, empty stats, and
// reset_peak_memory_stats / empty_cache do nothing; mem_get_info throws BackendUnavailableError.
// With CUDA, an index that does not exist throws IndexError.

/// Bytes held by live tensors on cuda:index (0 without CUDA).
int64_t memory_allocated(int index = -1);
/// Bytes the caching allocator holds from cuda:index (0 without CUDA).
int64_t memory_reserved(int index = -1);
/// Peak of memory_allocated since the start or the last reset (0 without CUDA).
int64_t max_memory_allocated(int index = -1);
/// Peak of memory_reserved since the start or the last reset (0 without CUDA).
int64_t max_memory_reserved(int index = -1);
/// Resets every peak of cuda:index to its current value (nothing to do without CUDA).
void reset_peak_memory_stats(int index = -1);
/// Gives cached, unused blocks of cuda:index back to the driver (nothing to do without CUDA).
void empty_cache(int index = -1);
/// Every counter of cuda:index's allocator (all zero without CUDA).
MemoryStats memory_stats(int index = -1);
/// memory_stats as a readable table, like torch.cuda.memory_summary() (zeros without CUDA).
std::string memory_summary(int index = -1);
/// (free, total) bytes of cuda:index; BackendUnavailableError without CUDA (as torch).
std::pair<uint64_t, uint64_t> mem_get_info(int index = -1);

}  // namespace locus::cuda

LOCUS_API_END
