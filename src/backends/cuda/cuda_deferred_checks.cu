// Deferred checks on CUDA (Note [Deferred checks]): one slot per device in host-mapped pinned
// memory, written by a one-thread kernel, read by the host after a synchronization.

#include "src/backends/cuda/cuda_deferred_checks.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_streams.h"
#include "src/ops/deferred_check.h"

namespace locus::cuda_backend {
namespace {

struct FailedCheck {
  int failed;  ///< 1 once a failure is recorded (written last)
  int op;
  int kind;
  long long value;
  long long bound;
};

// Any thread that finds a value out of range records it; when several do, which value is
// reported is unspecified (each store is one aligned word, so none is torn). No atomics: mapped
// host memory does not offer them over PCIe. An unraised earlier failure is kept.
__global__ void check_range_kernel(ops::DeferredCheckArgs a, FailedCheck* slot) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t v = a.values[i];
    if ((v >= 0 && v < a.bound) || (a.has_ignore && v == a.ignore)) continue;
    if (slot->failed) return;  // read (over PCIe) only on a failure
    slot->op = static_cast<int>(a.op);
    slot->kind = static_cast<int>(a.kind);
    slot->value = v;
    slot->bound = a.bound;
    __threadfence_system();
    slot->failed = 1;
  }
}

// The slots of every device, allocated on the first deferred check (never freed: kernels may
// still hold the pointers at exit). Not taken from the caching allocator: a few bytes the
// statistics of tensor memory should not show.
std::atomic<FailedCheck*> g_slots{nullptr};

FailedCheck* slots() {
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    check(cudaHostAlloc(&p, sizeof(FailedCheck) * kMaxDevices, cudaHostAllocMapped | cudaHostAllocPortable),
          "cudaHostAlloc (deferred checks)");
    auto* s = static_cast<FailedCheck*>(p);
    for (int d = 0; d < kMaxDevices; ++d) s[d] = FailedCheck{0, 0, 0, 0, 0};
    g_slots.store(s, std::memory_order_release);
  });
  return g_slots.load(std::memory_order_acquire);
}

}  // namespace

void defer_check(const ops::DeferredCheckArgs& a) {
  activate(a.device);
  FailedCheck* slot = slots() + a.device;
  FailedCheck* on_device = nullptr;
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&on_device), slot, 0), "cudaHostGetDevicePointer");
  const int64_t blocks = std::min<int64_t>((a.n + 255) / 256, 1024);
  check_range_kernel<<<static_cast<unsigned>(std::max<int64_t>(blocks, 1)), 256, 0, current_native_stream(a.device)>>>(a, on_device);
  check(cudaGetLastError(), "deferred check");
}

void raise_deferred_failures_anywhere() {
  for (int d = 0; d < kMaxDevices; ++d)
    if (was_activated(d)) raise_deferred_failures(d);
}

void raise_deferred_failures(int device) {
  static std::mutex mutex;
  FailedCheck* all = g_slots.load(std::memory_order_acquire);
  if (!all) return;  // no check was ever deferred
  volatile FailedCheck* slot = all + device;
  if (!slot->failed) return;  // the usual case: one read of host memory
  std::lock_guard lock(mutex);
  if (!slot->failed) return;
  const auto op = static_cast<ops::OpId>(slot->op);
  const auto kind = static_cast<ops::CheckKind>(slot->kind);
  const int64_t value = slot->value, bound = slot->bound;
  slot->failed = 0;
  ops::raise_failed_check(op, kind, value, bound, Device(DeviceType::CUDA, device), /*deferred=*/true);
}

}  // namespace locus::cuda_backend
