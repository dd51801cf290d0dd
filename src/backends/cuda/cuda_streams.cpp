#include "src/backends/cuda/cuda_streams.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "locus/errors.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_deferred_checks.h"

// Note [CUDA stream ids]
// A StreamId must name a stream and its device in one integer, because the caching allocator
// keys blocks by StreamId and records events on them long after the op that used the stream.
// Default streams are odd: (device << 1) | 1, the device's legacy default stream. Other
// streams are even: the address of a StreamRecord from a per-device pool (32 streams per
// priority, created with cudaStreamNonBlocking on first use and never destroyed, like
// PyTorch's pool), so an id stays valid for the life of the process. 0 is never a CUDA stream:
// the host pools use it for "no stream".

namespace locus::cuda_backend {
namespace {

struct StreamRecord {
  cudaStream_t handle = nullptr;
  int device = 0;
  int priority = 0;
};

constexpr int kPoolSize = 32;

struct DevicePool {
  std::mutex mutex;
  std::array<StreamRecord*, kPoolSize> streams[2] = {};
  std::atomic<unsigned> next[2] = {0, 0};
};

DevicePool& pool(int device) {
  static std::array<DevicePool, kMaxDevices> pools;
  return pools.at(static_cast<size_t>(device));
}

thread_local runtime::StreamId t_current[kMaxDevices] = {};

bool is_default(runtime::StreamId id) noexcept { return (id & 1) != 0; }
const StreamRecord* record_of(runtime::StreamId id) noexcept { return reinterpret_cast<const StreamRecord*>(id); }

std::pair<int, int> priorities(int device) {
  activate(device);
  int least = 0, greatest = 0;
  check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  return {least, greatest};
}

class CudaStreams final : public runtime::StreamRuntime {
 public:
  runtime::StreamId default_stream(int device) override { return default_stream_id(device); }
  runtime::StreamId current_stream(int device) override { return current_stream_id(device); }
  void set_current_stream(int device, runtime::StreamId stream) override {
    t_current[device] = stream == default_stream_id(device) ? 0 : stream;
  }
  runtime::StreamId pool_stream(int device, bool high_priority) override {
    DevicePool& p = pool(device);
    const int level = high_priority ? 1 : 0;
    const unsigned slot = p.next[level].fetch_add(1) % kPoolSize;
    std::lock_guard lock(p.mutex);
    StreamRecord*& r = p.streams[level][slot];
    if (!r) {
      auto rec = std::make_unique<StreamRecord>();
      rec->device = device;
      rec->priority = high_priority ? priorities(device).second : 0;
      activate(device);
      check(cudaStreamCreateWithPriority(&rec->handle, cudaStreamNonBlocking, rec->priority), "cudaStreamCreateWithPriority");
      r = rec.release();
    }
    return reinterpret_cast<runtime::StreamId>(r);
  }
  int stream_device(runtime::StreamId stream) const noexcept override { return stream_device_of(stream); }
  int stream_priority(runtime::StreamId stream) override { return is_default(stream) ? 0 : record_of(stream)->priority; }
  std::pair<int, int> priority_range() override {
    int device = 0;
    cudaGetDevice(&device);
    return priorities(device);
  }
  void* native_handle(runtime::StreamId stream) const noexcept override { return native_stream(stream); }
  bool query(runtime::StreamId stream) override {
    activate(stream_device_of(stream));
    const cudaError_t err = cudaStreamQuery(native_stream(stream));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    check(err, "cudaStreamQuery");
    return true;
  }
  void synchronize(runtime::StreamId stream) override {
    activate(stream_device_of(stream));
    check(cudaStreamSynchronize(native_stream(stream)), "cudaStreamSynchronize");
    raise_deferred_failures(stream_device_of(stream));
  }
  void wait_stream(runtime::StreamId waiter, runtime::StreamId other) override {
    if (waiter == other) return;
    void* event = event_create(stream_device_of(other), false);
    event_record(event, other);
    stream_wait_event(waiter, event);
    event_destroy(event);  // released by the driver once the wait no longer needs it
  }

  void* event_create(int device, bool timing) override {
    activate(device);
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
    return e;
  }
  void event_destroy(void* event) noexcept override {
    if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
  void event_record(void* event, runtime::StreamId stream) override {
    activate(stream_device_of(stream));
    check(cudaEventRecord(static_cast<cudaEvent_t>(event), native_stream(stream)), "cudaEventRecord");
  }
  bool event_query(void* event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    check(err, "cudaEventQuery");
    return true;
  }
  void event_synchronize(void* event) override {
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
    raise_deferred_failures_anywhere();
  }
  void stream_wait_event(runtime::StreamId stream, void* event) override {
    activate(stream_device_of(stream));
    check(cudaStreamWaitEvent(native_stream(stream), static_cast<cudaEvent_t>(event), 0), "cudaStreamWaitEvent");
  }
  float event_elapsed_ms(void* start, void* end) override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)), "cudaEventElapsedTime");
    return ms;
  }
};

}  // namespace

runtime::StreamId default_stream_id(int device) noexcept { return (static_cast<runtime::StreamId>(device) << 1) | 1; }

cudaStream_t native_stream(runtime::StreamId id) noexcept { return is_default(id) ? nullptr : record_of(id)->handle; }

int stream_device_of(runtime::StreamId id) noexcept {
  return is_default(id) ? static_cast<int>(id >> 1) : record_of(id)->device;
}

runtime::StreamId current_stream_id(int device) noexcept {
  const runtime::StreamId s = t_current[device];
  return s ? s : default_stream_id(device);
}

cudaStream_t current_native_stream(int device) noexcept {
  const runtime::StreamId s = t_current[device];
  return s ? record_of(s)->handle : nullptr;
}

runtime::StreamRuntime& cuda_streams() {
  static CudaStreams instance;
  return instance;
}

}  // namespace locus::cuda_backend
