#pragma once
// Allocator: the interface every device's memory source implements.

#include <cstddef>
#include <cstdint>

#include "locus/detail/storage.h"
#include "locus/memory.h"

namespace locus::runtime {

/// Identifies a stream within one device; 0 is the default stream. Devices without streams
/// (cpu, sim) always use 0.
using StreamId = uintptr_t;

/// Hands out device memory as DataPtrs and reports exact statistics. Thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// `nbytes` of memory for use on `stream`; zero bytes gives a null pointer that still frees
  /// cleanly. Throws OutOfMemoryError when the device cannot provide it.
  virtual detail::DataPtr allocate(size_t nbytes, StreamId stream = 0) = 0;
  virtual MemoryStats stats() const = 0;
  virtual void reset_peak_stats() = 0;
  /// Returns cached unused memory to the device.
  virtual void empty_cache() = 0;
  /// Marks that `data` is used by `stream` too, so it is not reused before that work ends.
  virtual void record_stream(const detail::DataPtr& data, StreamId stream) { (void)data; (void)stream; }
};

}  // namespace locus::runtime
