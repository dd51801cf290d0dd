#include "src/backends/cuda/cuda_transfer.h"

#include <cuda_runtime_api.h>

#include <mutex>

#include "locus/errors.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_deferred_checks.h"
#include "src/backends/cuda/cuda_streams.h"

namespace locus::cuda_backend {
namespace {

// The mark a non-blocking copy leaves on its pinned host buffer (Note [Host reads wait]).
class CopyInFlight final : public detail::PendingWork {
 public:
  CopyInFlight(cudaEvent_t event, bool writes_host) : event_(event), writes_host_(writes_host) {}
  ~CopyInFlight() override { cudaEventDestroy(event_); }
  void wait() override { check(cudaEventSynchronize(event_), "waiting for an asynchronous copy"); }
  bool done() noexcept override {
    const cudaError_t err = cudaEventQuery(event_);
    if (err == cudaErrorNotReady) cudaGetLastError();
    return err != cudaErrorNotReady;
  }
  bool writes() const noexcept override { return writes_host_; }
  // The pinned pool holds the block back until the copy's stream has passed it.
  bool memory_protected() const noexcept override { return true; }

 private:
  cudaEvent_t event_;
  bool writes_host_;  ///< a device-to-host copy; a host-to-device copy only reads the buffer
};

// Direct GPU-to-GPU transfers where the hardware allows; cudaMemcpyPeerAsync stages through
// the host otherwise, so this is only about speed.
void enable_peer_access(int from, int to) {
  static std::mutex mutex;
  static bool tried[kMaxDevices][kMaxDevices] = {};
  std::lock_guard lock(mutex);
  if (tried[from][to]) return;
  tried[from][to] = true;
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, from, to) == cudaSuccess && can) {
    activate(from);
    const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
    if (err != cudaSuccess) cudaGetLastError();  // already enabled, or refused: both harmless
  }
}

std::string describe(const runtime::CopyRequest& r) {
  return "copying " + format_bytes(r.n) + " from " + r.src_device.str() + " to " + r.dst_device.str();
}

}  // namespace

std::unique_ptr<detail::PendingWork> copy(const runtime::CopyRequest& r) {
  if (r.n == 0) return nullptr;
  runtime::StreamRuntime& streams = cuda_streams();
  const bool h2d = r.src_device.is_cpu(), d2h = r.dst_device.is_cpu();
  if (h2d || d2h) {
    const int device = h2d ? r.dst_device.index() : r.src_device.index();
    activate(device);
    const runtime::StreamId stream = current_stream_id(device);
    cudaStream_t native = native_stream(stream);
    check_lazy(cudaMemcpyAsync(r.dst, r.src, r.n, h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, native),
               [&] { return describe(r); });
    if (r.non_blocking && r.pinned_block) {
      runtime::pinned_allocator().record_stream(*r.pinned_block, stream);
      cudaEvent_t event = static_cast<cudaEvent_t>(streams.event_create(device, false));
      try {
        streams.event_record(event, stream);
      } catch (...) {
        cudaEventDestroy(event);
        throw;
      }
      return std::make_unique<CopyInFlight>(event, /*writes_host=*/d2h);
    }
    check_lazy(cudaStreamSynchronize(native), [&] { return describe(r); });
    raise_deferred_failures(device);  // the host waited: a check failed meanwhile raises now
    return nullptr;
  }
  const int src = r.src_device.index(), dst = r.dst_device.index();
  const runtime::StreamId src_stream = current_stream_id(src);
  if (src == dst) {
    activate(src);
    check_lazy(cudaMemcpyAsync(r.dst, r.src, r.n, cudaMemcpyDeviceToDevice, native_stream(src_stream)),
               [&] { return describe(r); });
    return nullptr;
  }
  // Two-way barrier: the copy waits for work already queued on the destination (which may still
  // use the buffer), and later destination work waits for the copy.
  const runtime::StreamId dst_stream = current_stream_id(dst);
  enable_peer_access(src, dst);
  streams.wait_stream(src_stream, dst_stream);
  activate(src);
  check_lazy(cudaMemcpyPeerAsync(r.dst, dst, r.src, src, r.n, native_stream(src_stream)),
             [&] { return describe(r); });
  streams.wait_stream(dst_stream, src_stream);
  return nullptr;
}

}  // namespace locus::cuda_backend
