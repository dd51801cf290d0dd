// GradScaler's unscale on CUDA: every gradient of one dtype on the device in as few launches as
// the kernel-argument limit allows (a multi-tensor pass, as PyTorch's
// _amp_foreach_non_finite_check_and_unscale_), each element read once, multiplied and checked.
// Nothing is read back: a non-finite element sets the device flag *found_inf, which the host
// reads once per step.

#include "src/backends/cuda/device_types.cuh"
#include "src/backends/cuda/multi_tensor.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kTensorsPerLaunch = 48;
constexpr int kBlocksPerLaunch = 320;
constexpr int64_t kChunk = 65536;  // elements one block handles

// A launch's tensors and, per block, which tensor and which chunk of it (about 2.4 KB: within
// the 4 KB a kernel argument may take).
struct UnscaleBatch {
  void* data[kTensorsPerLaunch];
  int64_t numel[kTensorsPerLaunch];
  BlockMap<kBlocksPerLaunch> blocks;
};

template <class T>
__global__ void unscale_kernel(UnscaleBatch batch, float inv_scale, float* found_inf) {
  const BlockChunk c = block_chunk(batch.blocks, batch.numel, kChunk);
  T* p = static_cast<T*>(batch.data[c.t]);
  const auto inv = static_cast<compute_t<T>>(inv_scale);
  bool bad = false;
  for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
    const compute_t<T> v = load(p + i);
    bad = bad || !isfinite(v);
    store(p + i, v * inv);
  }
  if (bad) *found_inf = 1.0f;  // every writer stores the same value
}

template <class T>
cudaError_t launch_batches(const ops::UnscaleArgs& a, cudaStream_t stream) {
  UnscaleBatch batch;
  return launch_multi_tensor<kTensorsPerLaunch, kBlocksPerLaunch>(
      a.count, a.numel, kChunk, batch.blocks,
      [&](int slot, int k) {
        batch.data[slot] = a.data[k];
        batch.numel[slot] = a.numel[k];
      },
      [&](int blocks) {
        unscale_kernel<T><<<blocks, kBlock, 0, stream>>>(batch, a.inv_scale, a.found_inf);
        return cudaGetLastError();
      });
}

}  // namespace

cudaError_t launch_unscale(const ops::UnscaleArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH_FLOAT(a.dtype, { err = launch_batches<scalar_t>(a, stream); });
  return err;
}

}  // namespace locus::cuda_backend
