#include "src/runtime/caching_allocator.h"

#include <algorithm>

#include "locus/errors.h"

// Note [Caching allocator]
// Device allocations are slow (cudaMalloc synchronises the device) and page-faulting fresh
// host memory costs more than the work done in it, so freed blocks are kept and reused.
// Requests round up to 512 bytes. Requests up to 1 MiB come from 2 MiB segments in the small
// pool; larger ones from the large pool, in 20 MiB segments below 10 MiB and otherwise
// rounded up to 2 MiB. A free block that is too big is split; freed neighbours within a
// segment coalesce. Blocks belong to the stream that allocated them: a block used by other
// streams (record_stream) only returns to its pool once events recorded on those streams at
// free time have completed, so no kernel still reading it can see it reused. When the device
// has no room, the ladder is: wait for the pending events and reuse what they release; free one
// cached segment big enough, retry; free every cached segment, retry; throw OutOfMemoryError. This mirrors PyTorch's CUDA allocator, which users
// already reason about, and it is the same code for sim and CUDA: only RawMemory differs.

namespace locus::runtime {
namespace {
constexpr size_t kMinBlockSize = 512;
constexpr size_t kSmallSize = size_t{1} << 20;
constexpr size_t kSmallBuffer = size_t{2} << 20;
constexpr size_t kLargeBuffer = size_t{20} << 20;
constexpr size_t kMinLargeAlloc = size_t{10} << 20;
constexpr size_t kRoundLarge = size_t{2} << 20;

size_t segment_size_for(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}
}  // namespace

struct CachingAllocator::Block {
  CachingAllocator* owner;
  Pool* pool;
  void* ptr;
  size_t size;
  size_t requested = 0;
  StreamId stream;
  bool allocated = false;
  int pending_events = 0;
  Block* prev = nullptr;
  Block* next = nullptr;
  std::vector<StreamId> stream_uses = {};
};

bool CachingAllocator::BlockOrder::operator()(const Block* a, const Block* b) const noexcept {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
}

void update_stat(StatCounter& c, int64_t delta) noexcept {
  c.current += delta;
  if (delta > 0) c.allocated += delta;
  else c.freed -= delta;
  c.peak = std::max(c.peak, c.current);
}

CachingAllocator::CachingAllocator(Device device, std::unique_ptr<RawMemory> raw, CachingPolicy policy)
    : device_(device), raw_(std::move(raw)), policy_(std::move(policy)) {}

CachingAllocator::~CachingAllocator() {
  // Blocks still allocated at exit belong to tensors that outlive the allocator (static
  // tensors); their segments are leaked on purpose rather than freed under them.
  std::lock_guard lock(mutex_);
  for (auto& p : pending_) raw_->destroy_event(p.event);
  release_free_segments();
}

size_t CachingAllocator::round_size(size_t nbytes) noexcept {
  if (nbytes < kMinBlockSize) return kMinBlockSize;
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

detail::DataPtr CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return detail::DataPtr(nullptr, nullptr, nullptr, device_);
  std::unique_lock lock(mutex_);
  process_pending_events();
  const size_t size = round_size(nbytes);
  Pool& pool = size <= kSmallSize ? small_pool_ : large_pool_;
  Block* block = find_free_block(pool, stream, size);
  if (!block) block = allocate_segment(pool, stream, segment_size_for(size));
  if (!block) {
    ++stats_.num_alloc_retries;
    // Blocks freed while other streams still used them (record_stream, pinned buffers of
    // asynchronous copies) wait on events: wait for those first, as PyTorch does, rather than
    // fail while big blocks are merely pending.
    process_pending_events(/*wait=*/true);
    block = find_free_block(pool, stream, size);
    if (!block && release_one_segment(segment_size_for(size))) block = allocate_segment(pool, stream, segment_size_for(size));
    if (!block) {
      release_free_segments();
      block = allocate_segment(pool, stream, segment_size_for(size));
    }
  }
  if (!block) throw_oom(nbytes);

  const size_t min_remainder = &pool == &small_pool_ ? kMinBlockSize : kSmallSize + 1;
  if (block->size - size >= min_remainder) {
    auto* rest = new Block{
        .owner = this, .pool = &pool, .ptr = static_cast<char*>(block->ptr) + size, .size = block->size - size, .stream = stream};
    rest->prev = block;
    rest->next = block->next;
    if (rest->next) rest->next->prev = rest;
    block->next = rest;
    block->size = size;
    pool.insert(rest);
  }
  block->allocated = true;
  block->requested = nbytes;
  update_stat(stats_.allocated_bytes, static_cast<int64_t>(block->size));
  update_stat(stats_.active_bytes, static_cast<int64_t>(block->size));
  update_stat(stats_.requested_bytes, static_cast<int64_t>(nbytes));
  update_stat(stats_.allocation, 1);
  return detail::DataPtr(block->ptr, block, &CachingAllocator::free_callback, device_);
}

CachingAllocator::Block* CachingAllocator::find_free_block(Pool& pool, StreamId stream, size_t size) {
  Block key{.owner = this, .pool = &pool, .ptr = nullptr, .size = size, .stream = stream};
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  pool.erase(it);
  return b;
}

CachingAllocator::Block* CachingAllocator::allocate_segment(Pool& pool, StreamId stream, size_t segment_size) noexcept {
  void* ptr = raw_->allocate(segment_size);
  if (!ptr) return nullptr;
  update_stat(stats_.reserved_bytes, static_cast<int64_t>(segment_size));
  reserved_now_.store(stats_.reserved_bytes.current, std::memory_order_relaxed);
  update_stat(stats_.segment, 1);
  return new Block{.owner = this, .pool = &pool, .ptr = ptr, .size = segment_size, .stream = stream};
}

void CachingAllocator::free_callback(void* ctx, void*) noexcept {
  auto* block = static_cast<Block*>(ctx);
  block->owner->free(block);
}

void CachingAllocator::free(Block* block) noexcept {
  std::lock_guard lock(mutex_);
  block->allocated = false;
  update_stat(stats_.allocated_bytes, -static_cast<int64_t>(block->size));
  update_stat(stats_.requested_bytes, -static_cast<int64_t>(block->requested));
  update_stat(stats_.allocation, -1);
  if (!block->stream_uses.empty()) {
    for (StreamId s : block->stream_uses) {
      void* event = raw_->record_event(s);
      if (!event) continue;
      ++block->pending_events;
      pending_.push_back({block, event});
    }
    block->stream_uses.clear();
    if (block->pending_events > 0) return;  // still active until the events complete
  }
  update_stat(stats_.active_bytes, -static_cast<int64_t>(block->size));
  free_block(block);
  trim_cache();
}

void CachingAllocator::free_block(Block* block) noexcept {
  Pool& pool = *block->pool;
  auto mergeable = [&](Block* n) { return n && !n->allocated && n->pending_events == 0 && pool.count(n); };
  // Joins `second`, the free block right after `first` in the segment, into `first`.
  auto join = [](Block* first, Block* second) noexcept {
    first->size += second->size;
    first->next = second->next;
    if (first->next) first->next->prev = first;
    delete second;
  };
  if (Block* p = block->prev; mergeable(p)) {
    pool.erase(p);
    join(p, block);
    block = p;
  }
  if (Block* n = block->next; mergeable(n)) {
    pool.erase(n);
    join(block, n);
  }
  pool.insert(block);
}

void CachingAllocator::process_pending_events(bool wait) noexcept {
  if (pending_.empty()) return;
  std::vector<PendingFree> still;
  for (auto& p : pending_) {
    if (wait) raw_->wait_event(p.event);
    if (!raw_->event_done(p.event)) {
      still.push_back(p);
      continue;
    }
    raw_->destroy_event(p.event);
    if (--p.block->pending_events == 0) {
      update_stat(stats_.active_bytes, -static_cast<int64_t>(p.block->size));
      free_block(p.block);
    }
  }
  pending_.swap(still);
}

void CachingAllocator::release_segment(Block* block) noexcept {
  block->pool->erase(block);
  raw_->free(block->ptr, block->size);
  update_stat(stats_.reserved_bytes, -static_cast<int64_t>(block->size));
  reserved_now_.store(stats_.reserved_bytes.current, std::memory_order_relaxed);
  update_stat(stats_.segment, -1);
  delete block;
}

bool CachingAllocator::release_one_segment(size_t at_least) noexcept {
  // The smallest whole free segment that is big enough; else nothing (the caller then frees all).
  Block* best = nullptr;
  for (Pool* pool : {&small_pool_, &large_pool_})
    for (Block* b : *pool)
      if (!b->prev && !b->next && b->size >= at_least && (!best || b->size < best->size)) best = b;
  if (!best) return false;
  release_segment(best);
  return true;
}

void CachingAllocator::release_free_segments() noexcept {
  for (Pool* pool : {&small_pool_, &large_pool_}) {
    std::vector<Block*> whole;
    for (Block* b : *pool)
      if (!b->prev && !b->next) whole.push_back(b);
    for (Block* b : whole) release_segment(b);
  }
}

void CachingAllocator::trim_cache() noexcept {
  if (policy_.max_cached_bytes == 0) return;
  auto cached = [&] { return stats_.reserved_bytes.current - stats_.allocated_bytes.current; };
  while (cached() > static_cast<int64_t>(policy_.max_cached_bytes)) {
    Block* largest = nullptr;
    for (Pool* pool : {&small_pool_, &large_pool_})
      for (Block* b : *pool)
        if (!b->prev && !b->next && (!largest || b->size > largest->size)) largest = b;
    if (!largest) return;
    release_segment(largest);
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  process_pending_events(/*wait=*/true);  // a pending block is cache the caller wants back
  release_free_segments();
}

void CachingAllocator::record_stream(const detail::DataPtr& data, StreamId stream) {
  // Memory lent by another library (a DLPack import) is not a block of this pool: its context
  // is not a Block, and its release waits for the device itself (Note [DLPack lifetimes]).
  if (data.deleter() != &CachingAllocator::free_callback) return;
  auto* block = static_cast<Block*>(data.context());
  if (!block) return;
  std::lock_guard lock(mutex_);
  if (stream == block->stream) return;
  if (std::find(block->stream_uses.begin(), block->stream_uses.end(), stream) == block->stream_uses.end())
    block->stream_uses.push_back(stream);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard lock(mutex_);
  for (StatCounter* c : {&stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
                         &stats_.requested_bytes, &stats_.allocation, &stats_.segment})
    c->peak = c->current;
}

void CachingAllocator::throw_oom(size_t requested) {
  ++stats_.num_ooms;
  auto [free_bytes, total] = raw_->mem_get_info();
  const auto allocated = static_cast<uint64_t>(stats_.allocated_bytes.current);
  const auto reserved = static_cast<uint64_t>(stats_.reserved_bytes.current);
  throw OutOfMemoryError(device_, requested, total, free_bytes, allocated, reserved,
                         segment_size_for(round_size(requested)));  // Note [Out-of-memory hints]
}

}  // namespace locus::runtime
