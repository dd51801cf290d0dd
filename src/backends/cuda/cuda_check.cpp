#include "src/backends/cuda/cuda_check.h"

#include <array>
#include <atomic>

#include "locus/errors.h"

namespace locus::cuda_backend {

void throw_cuda_error(cudaError_t err, const std::string& what) {
  cudaGetLastError();
  throw Error("CUDA error during " + what + ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

void activate(int device) {
  int current = -1;
  // cudaGetDevice reads thread state only; it creates no context.
  if (cudaGetDevice(&current) == cudaSuccess && current == device) return;
  check(cudaSetDevice(device), "cudaSetDevice");
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
