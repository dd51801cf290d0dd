#pragma once
// CachingAllocator: the generic device allocator shared by sim and CUDA (and large CPU
// buffers). See Note [Caching allocator] in caching_allocator.cpp.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "src/runtime/allocator.h"
#include "src/runtime/raw_memory.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::runtime {

/// Tuning of one CachingAllocator instance.
struct CachingPolicy {
  /// Cached-but-unused bytes above which whole free segments go back at once (host pools,
  /// where memory is shared with everything else on the machine). 0 means no limit.
  size_t max_cached_bytes = 0;
};

/// Size-classed, best-fit caching allocator with block splitting and coalescing, blocks owned
/// by a stream, deferred reuse across streams, and the out-of-memory ladder (free one cached
/// segment, free all, throw). Statistics are exact. Thread-safe (one mutex).
class CachingAllocator final : public Allocator {
 public:
  CachingAllocator(Device device, std::unique_ptr<RawMemory> raw, CachingPolicy policy = {});
  ~CachingAllocator() override;

  detail::DataPtr allocate(size_t nbytes, StreamId stream = 0) override;
  MemoryStats stats() const override;
  /// stats().reserved_bytes.current without the lock (what the CPU allocator's small path
  /// reads on every allocation).
  int64_t reserved_bytes() const noexcept { return reserved_now_.load(std::memory_order_relaxed); }
  void reset_peak_stats() override;
  void empty_cache() override;
  void record_stream(const detail::DataPtr& data, StreamId stream) override;
  RawMemory& raw() noexcept { return *raw_; }
  /// Bytes a request of `nbytes` occupies (rounded to the block granularity).
  static size_t round_size(size_t nbytes) noexcept;

  struct Block;
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const noexcept;
  };
  using Pool = std::set<Block*, BlockOrder>;

 private:
  static void free_callback(void* ctx, void* ptr) noexcept;
  void free(Block* block) noexcept;
  void free_block(Block* block) noexcept;
  Block* find_free_block(Pool& pool, StreamId stream, size_t size);
  Block* allocate_segment(Pool& pool, StreamId stream, size_t segment_size) noexcept;
  bool release_one_segment(size_t at_least) noexcept;
  void release_free_segments() noexcept;
  void release_segment(Block* block) noexcept;
  /// Returns the blocks whose pending events have completed to their pools; with `wait`,
  /// waits for every pending event first (empty_cache and the out-of-memory ladder).
  void process_pending_events(bool wait = false) noexcept;
  void trim_cache() noexcept;
  [[noreturn]] void throw_oom(size_t requested);

  Device device_;
  std::unique_ptr<RawMemory> raw_;
  CachingPolicy policy_;
  mutable std::mutex mutex_;
  Pool small_pool_, large_pool_;
  struct PendingFree {
    Block* block;
    void* event;
  };
  std::vector<PendingFree> pending_;
  MemoryStats stats_;
  std::atomic<int64_t> reserved_now_{0};  ///< mirrors stats_.reserved_bytes.current
};

/// Adds `delta` to a counter, updating peak and totals.
void update_stat(StatCounter& c, int64_t delta) noexcept;

}  // namespace locus::runtime

LOCUS_API_END
