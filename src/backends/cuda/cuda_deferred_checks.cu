// Deferred checks on CUDA (Note [Deferred checks]): one slot per device in host-mapped pinned
// memory, written by a one-thread kernel, read by the host after a synchronization.

#include "src/backends/cuda/cuda_deferred_checks.h"

#include <cuda_runtime_api.h>

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

__global__ void record_failure_kernel(const int64_t* count, const int64_t* value, FailedCheck* slot, int op, int kind,
                                      long long bound) {
  // The first failure wins until the host has raised it; one thread, so no atomics (which
  // mapped host memory does not offer over PCIe).
  if (*count == 0 || slot->failed) return;
  slot->op = op;
  slot->kind = kind;
  slot->value = *value;
  slot->bound = bound;
  __threadfence_system();
  slot->failed = 1;
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
  record_failure_kernel<<<1, 1, 0, current_native_stream(a.device)>>>(a.count, a.value, on_device, static_cast<int>(a.op),
                                                                       static_cast<int>(a.kind), a.bound);
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
