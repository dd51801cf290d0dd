#include "src/backends/cpu/cpu_allocator.h"

#include <cstdlib>
#include <string>

#include "locus/errors.h"
#include "src/runtime/host_memory.h"

namespace locus::cpu {
namespace {

constexpr size_t kLargeThreshold = size_t{128} << 10;  // glibc mmaps from here on: each call would page-fault

size_t cache_limit() {
  if (const char* env = std::getenv("LOCUS_CPU_CACHE_BYTES")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end && *end == '\0') return static_cast<size_t>(v);
  }
  const uint64_t total = runtime::host_mem_info().second;
  return static_cast<size_t>(std::min<uint64_t>(uint64_t{1} << 30, total / 8));
}

// A large block's context: the pool's DataPtr plus the byte counts to undo on free.
struct LargeBlock {
  detail::DataPtr inner;
  size_t requested;
  size_t rounded;
  CpuAllocator* owner;
};

}  // namespace

void CpuAllocator::Counter::add(int64_t delta) noexcept {
  const int64_t now = current.fetch_add(delta, std::memory_order_relaxed) + delta;
  if (delta > 0) {
    allocated.fetch_add(delta, std::memory_order_relaxed);
    int64_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
  } else {
    freed.fetch_add(-delta, std::memory_order_relaxed);
  }
}

StatCounter CpuAllocator::Counter::snapshot() const noexcept {
  return {current.load(), peak.load(), allocated.load(), freed.load()};
}

CpuAllocator::CpuAllocator()
    : large_(std::make_unique<runtime::CachingAllocator>(Device(DeviceType::CPU), std::make_unique<runtime::HostMemory>(),
                                                         runtime::CachingPolicy{cache_limit()})) {
  instance_ = this;
}

CpuAllocator* CpuAllocator::instance_ = nullptr;

detail::DataPtr CpuAllocator::allocate(size_t nbytes, runtime::StreamId) {
  const Device cpu(DeviceType::CPU);
  if (nbytes == 0) return detail::DataPtr(nullptr, nullptr, nullptr, cpu);
  if (nbytes < kLargeThreshold) {
    void* p = std::malloc(nbytes);
    if (!p) {
      ++num_ooms_;
      auto [free_bytes, total] = runtime::host_mem_info();
      throw OutOfMemoryError(cpu, nbytes, total, free_bytes, static_cast<uint64_t>(allocated_.current.load()),
                             static_cast<uint64_t>(stats().reserved_bytes.current));
    }
    const auto n = static_cast<int64_t>(nbytes);
    allocated_.add(n);
    requested_.add(n);
    allocations_.add(1);
    small_reserved_.add(n);
    small_segments_.add(1);
    note_reserved_peak();
    // The context carries the size, so freeing needs no lookup and no extra allocation.
    return detail::DataPtr(p, reinterpret_cast<void*>(nbytes), &CpuAllocator::free_small, cpu);
  }
  detail::DataPtr inner;
  try {
    inner = large_->allocate(nbytes);
  } catch (const OutOfMemoryError&) {
    ++num_ooms_;
    throw;
  }
  void* p = inner.get();
  const size_t rounded = runtime::CachingAllocator::round_size(nbytes);
  allocated_.add(static_cast<int64_t>(rounded));
  requested_.add(static_cast<int64_t>(nbytes));
  allocations_.add(1);
  note_reserved_peak();
  return detail::DataPtr(p, new LargeBlock{std::move(inner), nbytes, rounded, this}, &CpuAllocator::free_large, cpu);
}

void CpuAllocator::free_small(void* ctx, void* ptr) noexcept {
  std::free(ptr);
  const auto n = static_cast<int64_t>(reinterpret_cast<size_t>(ctx));
  CpuAllocator* self = instance_;
  self->allocated_.add(-n);
  self->requested_.add(-n);
  self->allocations_.add(-1);
  self->small_reserved_.add(-n);
  self->small_segments_.add(-1);
}

void CpuAllocator::free_large(void* ctx, void*) noexcept {
  auto* block = static_cast<LargeBlock*>(ctx);
  CpuAllocator* self = block->owner;
  self->allocated_.add(-static_cast<int64_t>(block->rounded));
  self->requested_.add(-static_cast<int64_t>(block->requested));
  self->allocations_.add(-1);
  delete block;  // returns the memory to the pool
}

void CpuAllocator::note_reserved_peak() noexcept {
  const int64_t now = small_reserved_.current.load() + large_->reserved_bytes();
  int64_t p = reserved_peak_.load();
  while (now > p && !reserved_peak_.compare_exchange_weak(p, now)) {
  }
}

MemoryStats CpuAllocator::stats() const {
  MemoryStats s;
  const MemoryStats large = large_->stats();
  s.allocated_bytes = allocated_.snapshot();
  s.active_bytes = s.allocated_bytes;
  s.requested_bytes = requested_.snapshot();
  s.allocation = allocations_.snapshot();
  const StatCounter small = small_reserved_.snapshot();
  s.reserved_bytes = {small.current + large.reserved_bytes.current, reserved_peak_.load(),
                      small.allocated + large.reserved_bytes.allocated, small.freed + large.reserved_bytes.freed};
  const StatCounter seg = small_segments_.snapshot();
  s.segment = {seg.current + large.segment.current, std::max(seg.peak, seg.current + large.segment.current),
               seg.allocated + large.segment.allocated, seg.freed + large.segment.freed};
  s.num_alloc_retries = large.num_alloc_retries;
  s.num_ooms = num_ooms_.load();
  return s;
}

void CpuAllocator::reset_peak_stats() {
  for (Counter* c : {&allocated_, &requested_, &allocations_, &small_reserved_, &small_segments_})
    c->peak.store(c->current.load());
  large_->reset_peak_stats();
  reserved_peak_.store(small_reserved_.current.load() + large_->reserved_bytes());
}

void CpuAllocator::empty_cache() { large_->empty_cache(); }

}  // namespace locus::cpu
