#pragma once
// RawMemory over host pages, for the CPU's large-buffer pool, sim devices and pinned memory.

#include <atomic>
#include <cstdint>

#include "src/runtime/raw_memory.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::runtime {

/// Total and available physical memory of the machine (/proc/meminfo).
std::pair<uint64_t, uint64_t> host_mem_info();

/// Host pages from mmap, with transparent huge pages asked for on large segments (fewer page
/// faults on first touch). Optionally page-locked (mlock), and optionally bounded by a
/// capacity, which is how a sim device gets its size.
class HostMemory final : public RawMemory {
 public:
  /// `capacity` 0 means the machine's memory; `lock_pages` mlocks each segment (best effort).
  explicit HostMemory(uint64_t capacity = 0, bool lock_pages = false) : capacity_(capacity), lock_(lock_pages) {}
  void* allocate(size_t nbytes) noexcept override;
  void free(void* ptr, size_t nbytes) noexcept override;
  std::pair<uint64_t, uint64_t> mem_get_info() const override;
  uint64_t used() const noexcept { return used_.load(); }

 private:
  uint64_t capacity_;
  bool lock_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace locus::runtime

LOCUS_API_END
