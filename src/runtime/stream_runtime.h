#pragma once
// StreamRuntime: the streams and events of a device type that has them (CUDA). Devices
// without (cpu, sim) run everything in order on stream 0 and return no StreamRuntime.

#include <utility>

#include "src/runtime/allocator.h"

namespace locus::runtime {

/// Streams are StreamIds (never 0, which means "no stream"); events are opaque handles.
/// Thread-safe. The current stream is per thread and per device.
class StreamRuntime {
 public:
  virtual ~StreamRuntime() = default;
  /// The device's default stream.
  virtual StreamId default_stream(int device) = 0;
  /// The calling thread's current stream on `device` (the default stream until set).
  virtual StreamId current_stream(int device) = 0;
  virtual void set_current_stream(int device, StreamId stream) = 0;
  /// A stream from the device's pool (created on first use, never destroyed, so a StreamId
  /// stays valid for the life of the process); `high_priority` picks the high-priority pool.
  virtual StreamId pool_stream(int device, bool high_priority) = 0;
  /// The device a stream belongs to.
  virtual int stream_device(StreamId stream) const noexcept = 0;
  /// Scheduling priority (lower runs first; 0 is the default).
  virtual int stream_priority(StreamId stream) = 0;
  /// (least, greatest) priority values the device supports, PyTorch's order: greatest < least.
  virtual std::pair<int, int> priority_range() = 0;
  /// The native handle (cudaStream_t), for interop.
  virtual void* native_handle(StreamId stream) const noexcept = 0;
  /// True when all work queued on the stream has finished.
  virtual bool query(StreamId stream) = 0;
  virtual void synchronize(StreamId stream) = 0;
  /// Makes future work on `waiter` wait for the work queued on `other` so far.
  virtual void wait_stream(StreamId waiter, StreamId other) = 0;

  /// A new event on `device` (timing enabled if asked). Destroy with event_destroy.
  virtual void* event_create(int device, bool timing) = 0;
  virtual void event_destroy(void* event) noexcept = 0;
  virtual void event_record(void* event, StreamId stream) = 0;
  virtual bool event_query(void* event) = 0;
  virtual void event_synchronize(void* event) = 0;
  virtual void stream_wait_event(StreamId stream, void* event) = 0;
  /// Milliseconds between two recorded timing events.
  virtual float event_elapsed_ms(void* start, void* end) = 0;
};

}  // namespace locus::runtime
