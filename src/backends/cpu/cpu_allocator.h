#pragma once
// The CPU allocator: malloc for small buffers, a bounded caching pool for large ones.

#include <atomic>
#include <memory>

#include "src/runtime/caching_allocator.h"

namespace locus::cpu {

/// Small buffers (under 128 KiB) come from malloc, which is fast for them. Larger ones come from a
/// CachingAllocator over mmap'ed pages, so a fresh 64 MiB result reuses pages that are already
/// mapped instead of paying ~16k page faults each time; the pool keeps at most
/// LOCUS_CPU_CACHE_BYTES (default min(1 GiB, RAM/8)) of unused memory. Every byte is counted.
class CpuAllocator final : public runtime::Allocator {
 public:
  CpuAllocator();
  detail::DataPtr allocate(size_t nbytes, runtime::StreamId stream = 0) override;
  MemoryStats stats() const override;
  void reset_peak_stats() override;
  void empty_cache() override;

 private:
  struct Counter {
    std::atomic<int64_t> current{0}, peak{0}, allocated{0}, freed{0};
    void add(int64_t delta) noexcept;
    StatCounter snapshot() const noexcept;
  };
  static void free_small(void* ctx, void* ptr) noexcept;
  static void free_large(void* ctx, void* ptr) noexcept;
  void note_reserved_peak() noexcept;

  static CpuAllocator* instance_;  // the one CPU allocator (owned by the CPU runtime)
  std::unique_ptr<runtime::CachingAllocator> large_;
  Counter allocated_, requested_, allocations_, small_reserved_, small_segments_;
  std::atomic<int64_t> reserved_peak_{0};
  std::atomic<int64_t> num_ooms_{0};
};

}  // namespace locus::cpu
