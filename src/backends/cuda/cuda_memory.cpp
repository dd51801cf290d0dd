#include "src/backends/cuda/cuda_memory.h"

#include <cuda_runtime_api.h>

#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_streams.h"
#include "src/runtime/device_runtime.h"
#include "src/runtime/host_memory.h"

namespace locus::cuda_backend {
namespace {

// Events on the stream's own device, for the allocator's deferred reuse (Note [Caching
// allocator]). Failures here cannot throw (the allocator calls them under its lock while
// freeing); a failed record falls back to waiting for the stream.
class StreamEvents : public runtime::RawMemory {
 public:
  void* record_event(runtime::StreamId stream) override {
    try {
      runtime::StreamRuntime& s = cuda_streams();
      void* event = s.event_create(stream_device_of(stream), false);
      s.event_record(event, stream);
      return event;
    } catch (...) {
      cudaStreamSynchronize(native_stream(stream));
      return nullptr;
    }
  }
  bool event_done(void* event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      cudaGetLastError();
      return false;
    }
    return true;  // done, or the device is lost: either way nothing will touch the block
  }
  void wait_event(void* event) noexcept override {
    if (cudaEventSynchronize(static_cast<cudaEvent_t>(event)) != cudaSuccess) cudaGetLastError();
  }
  void destroy_event(void* event) noexcept override { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
};

class DeviceMemory final : public StreamEvents {
 public:
  explicit DeviceMemory(int device) : device_(device) {}
  void* allocate(size_t nbytes) noexcept override {
    void* p = nullptr;
    if (cudaSetDevice(device_) != cudaSuccess || cudaMalloc(&p, nbytes) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void free(void* ptr, size_t) noexcept override {
    cudaSetDevice(device_);
    cudaFree(ptr);
  }
  std::pair<uint64_t, uint64_t> mem_get_info() const override {
    activate(device_);
    size_t free_bytes = 0, total = 0;
    check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    return {free_bytes, total};
  }

 private:
  int device_;
};

class PinnedMemory final : public StreamEvents {
 public:
  void* allocate(size_t nbytes) noexcept override {
    void* p = nullptr;
    // The driver registers pinned memory through the thread's current device, creating its
    // context if needed. A DataLoader worker has never chosen one (cuda:0 by default), so use
    // a device the program already works on rather than waking cuda:0 on a machine where the
    // program uses cuda:1.
    if (const int device = last_activated(); device >= 0 && cudaSetDevice(device) != cudaSuccess) cudaGetLastError();
    if (cudaHostAlloc(&p, nbytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void free(void* ptr, size_t) noexcept override { cudaFreeHost(ptr); }
  std::pair<uint64_t, uint64_t> mem_get_info() const override {
    return runtime::host_mem_info();
  }
};

}  // namespace

std::unique_ptr<runtime::RawMemory> make_device_memory(int device) { return std::make_unique<DeviceMemory>(device); }
std::unique_ptr<runtime::RawMemory> make_pinned_memory() { return std::make_unique<PinnedMemory>(); }

detail::DataPtr device_scratch(int device, size_t bytes) {
  return runtime::allocator_for(Device(DeviceType::CUDA, device)).allocate(bytes, current_stream_id(device));
}

}  // namespace locus::cuda_backend
