#pragma once
// RawMemory: the one thing that differs between devices under the caching allocator.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "src/runtime/allocator.h"

namespace locus::runtime {

/// The device's own allocate/free, plus the events the caching allocator needs to reuse a
/// block across streams safely. CUDA implements it over cudaMalloc and cudaEvent; sim and the
/// host pools over plain host memory, where work is synchronous and events are always done.
class RawMemory {
 public:
  virtual ~RawMemory() = default;
  /// A new segment of exactly `nbytes`, or nullptr when the device has no room.
  virtual void* allocate(size_t nbytes) noexcept = 0;
  virtual void free(void* ptr, size_t nbytes) noexcept = 0;
  /// (free, total) bytes of the device.
  virtual std::pair<uint64_t, uint64_t> mem_get_info() const = 0;
  /// Records an event on `stream`; null when the device completes work synchronously.
  virtual void* record_event(StreamId stream) { (void)stream; return nullptr; }
  /// True when the recorded work has finished.
  virtual bool event_done(void* event) { (void)event; return true; }
  /// Waits until the recorded work has finished.
  virtual void wait_event(void* event) noexcept { (void)event; }
  virtual void destroy_event(void* event) noexcept { (void)event; }
};

}  // namespace locus::runtime
