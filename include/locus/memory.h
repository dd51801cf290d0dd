#pragma once
/// \file memory.h
/// Memory statistics per device (cpu counted, sim and cuda through the caching allocator).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string>
#include <utility>

#include "locus/device.h"

namespace locus {

/// One tracked quantity: its current value, the peak since the last reset, and the running
/// totals of what was added and removed.
struct StatCounter {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;  ///< total ever added
  int64_t freed = 0;      ///< total ever removed
};

/// What one device's allocator reports. Bytes for the *_bytes fields, counts otherwise.
struct MemoryStats {
  StatCounter allocated_bytes;  ///< held by live tensors (rounded block sizes)
  StatCounter reserved_bytes;   ///< obtained from the device (allocated + cached)
  StatCounter active_bytes;     ///< allocated, plus freed blocks still in use by pending work
  StatCounter requested_bytes;  ///< exactly what callers asked for
  StatCounter allocation;       ///< number of live allocations
  StatCounter segment;          ///< number of blocks obtained from the device
  int64_t num_alloc_retries = 0;  ///< allocations that had to free the cache and retry
  int64_t num_ooms = 0;           ///< allocations that ended in OutOfMemoryError
};

/// The per-device calls, for any device type (`memory::memory_allocated(Device("sim:0"))`).
/// All are thread-safe. Devices without an index mean the current device of that type.
///
/// Portable as PyTorch's: for a device type this build or machine cannot use (cuda without a
/// GPU, mps off Apple), whatever the index, the byte counts and memory_stats are 0,
/// reset_peak_memory_stats and empty_cache do nothing, and memory_summary is a table of zeros;
/// only mem_get_info throws (BackendUnavailableError). On a usable type, an index that does
/// not exist (sim:5 with two sim devices) throws IndexError naming the device count.
namespace memory {
/// Bytes held by live tensors on `device`. Exact at all times.
int64_t memory_allocated(Device device);
/// Bytes the allocator holds from the device (>= memory_allocated).
int64_t memory_reserved(Device device);
/// The peak of memory_allocated since the start or the last reset_peak_memory_stats.
int64_t max_memory_allocated(Device device);
/// The peak of memory_reserved since the start or the last reset_peak_memory_stats.
int64_t max_memory_reserved(Device device);
/// Resets every peak to its current value.
void reset_peak_memory_stats(Device device);
/// Gives cached, unused blocks back to the device (or the OS for cpu and pinned memory).
void empty_cache(Device device);
/// Every counter of the device's allocator (all zero for an unusable device type).
MemoryStats memory_stats(Device device);
/// A readable table of memory_stats, like torch.cuda.memory_summary().
std::string memory_summary(Device device);
/// (free, total) bytes of the device as a whole; BackendUnavailableError for an unusable type.
std::pair<uint64_t, uint64_t> mem_get_info(Device device);
/// Stats of the cached pinned (page-locked) host allocator.
MemoryStats host_pinned_memory_stats();
/// Gives cached pinned host blocks back to the OS.
void host_pinned_empty_cache();
}  // namespace memory

}  // namespace locus

LOCUS_API_END
