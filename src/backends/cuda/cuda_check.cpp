#include "src/backends/cuda/cuda_check.h"

#include <array>
#include <atomic>

#include "locus/errors.h"

namespace locus::cuda_backend {

void throw_cuda_error(cudaError_t err, const std::string& what) {
  cudaGetLastError();
  throw Error("CUDA error during " + what + ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

namespace {
// Devices Locus has made current on some thread (so their contexts exist), and the last one.
std::atomic<uint64_t> g_activated{0};
std::atomic<int> g_last_activated{-1};
}  // namespace

bool was_activated(int device) noexcept {
  return device < 64 && (g_activated.load(std::memory_order_relaxed) >> device & 1u);
}

int last_activated() noexcept { return g_last_activated.load(std::memory_order_relaxed); }

void activate(int device) {
  int current = -1;
  // cudaGetDevice reads thread state only; it creates no context.
  if (cudaGetDevice(&current) != cudaSuccess || current != device) check(cudaSetDevice(device), "cudaSetDevice");
  if (device < 64 && !was_activated(device)) g_activated.fetch_or(uint64_t{1} << device, std::memory_order_relaxed);
  g_last_activated.store(device, std::memory_order_relaxed);
}



int sm_count(int device) {
  static std::array<std::atomic<int>, 64> cache{};
  auto& slot = cache.at(static_cast<size_t>(device));
  int n = slot.load(std::memory_order_relaxed);
  if (n == 0) {
    check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    slot.store(n, std::memory_order_relaxed);
  }
  return n;
}

}  // namespace locus::cuda_backend
