#pragma once
/// \file stream.h
/// CUDA streams and events (torch.cuda.Stream, torch.cuda.Event, torch.cuda.stream(...)).
/// Every call throws BackendUnavailableError, with the reason, where CUDA is unavailable.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>

#include "locus/device.h"

namespace locus::cuda {

class Event;

/// A queue of work on one CUDA device. A small value type: copies name the same stream.
/// Streams made with the constructor come from a per-device pool (32 per priority, as in
/// PyTorch) and live as long as the process. Thread-safe.
class Stream {
 public:
  /// A stream from the pool of `device` (-1: the current device). `priority` 0 is normal;
  /// a negative value asks for the high-priority pool (lower numbers run first, as in CUDA).
  explicit Stream(int device = -1, int priority = 0);
  /// The device it belongs to (cuda:N).
  Device device() const noexcept { return Device(DeviceType::CUDA, device_); }
  /// Its priority (0, or the device's greatest priority for high-priority streams).
  int priority() const;
  /// True when all work queued on it has finished. Never blocks.
  bool query() const;
  /// Blocks the calling thread until all work queued on it has finished.
  void synchronize() const;
  /// Makes work queued on this stream from now on wait for the work already queued on `other`
  /// (which may be on another device). Does not block the host.
  void wait_stream(const Stream& other) const;
  /// Makes work queued from now on wait for `event` (recorded or not yet: then no wait).
  void wait_event(const Event& event) const;
  /// Records a new event on this stream and returns it.
  Event record_event() const;
  /// The cudaStream_t, for calling CUDA libraries directly (nullptr for the default stream).
  void* native_handle() const;
  /// Locus's identifier of the stream (stable for the process).
  uintptr_t id() const noexcept { return id_; }
  bool operator==(const Stream& o) const noexcept { return id_ == o.id_; }
  bool operator!=(const Stream& o) const noexcept { return id_ != o.id_; }

  /// Wraps an identifier from current_stream()/default_stream(); not for user code.
  static Stream from_id(int device, uintptr_t id) noexcept { return Stream(device, id, 0); }

 private:
  Stream(int device, uintptr_t id, int) noexcept : device_(device), id_(id) {}
  int device_ = 0;
  uintptr_t id_ = 0;
};

/// The calling thread's current stream on `device` (-1: current device): where ops launch.
Stream current_stream(int device = -1);
/// The default stream of `device` (-1: current device).
Stream default_stream(int device = -1);
/// Makes `stream` the calling thread's current stream on its device.
void set_stream(const Stream& stream);
/// Blocks until all work on `device` (-1: current device) has finished, on every stream.
void synchronize(int device = -1);

/// RAII: makes `stream` current on its device and its device the thread's current CUDA
/// device, then restores both (the C++ form of `with torch.cuda.stream(s):`).
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_stream_;
  int previous_device_;
};

/// A marker in a stream's work, for waiting on and timing it. Created on first record, on
/// the recording stream's device. Move-only; not thread-safe (one owner at a time).
class Event {
 public:
  /// `enable_timing` allows elapsed_time() (timing events cost a little more).
  explicit Event(bool enable_timing = false) noexcept : timing_(enable_timing) {}
  Event(Event&& o) noexcept;
  Event& operator=(Event&& o) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  /// Records the event on `stream` (default: the current stream of the current device).
  /// ValueError when it was recorded on another device before.
  void record();
  void record(const Stream& stream);
  /// True when the recorded work has finished (true if never recorded). Never blocks.
  bool query() const;
  /// Blocks until the recorded work has finished (returns at once if never recorded).
  void synchronize() const;
  /// Milliseconds from this event to `end`; both recorded with timing, `end` completed.
  /// ValueError otherwise.
  float elapsed_time(const Event& end) const;
  /// True once recorded.
  bool recorded() const noexcept { return native_ != nullptr; }
  /// The cudaEvent_t (nullptr before the first record).
  void* native_handle() const noexcept { return native_; }

 private:
  friend class Stream;
  bool timing_;
  int device_ = -1;
  void* native_ = nullptr;
};

}  // namespace locus::cuda

LOCUS_API_END
