// GradScaler's unscale on CUDA: every gradient of one dtype on the device in as few launches as
// the kernel-argument limit allows (a multi-tensor pass, as PyTorch's
// _amp_foreach_non_finite_check_and_unscale_), each element read once, multiplied and checked.
// Nothing is read back: a non-finite element sets the device flag *found_inf, which the host
// reads once per step.

#include "src/backends/cuda/device_types.cuh"

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
  unsigned char block_tensor[kBlocksPerLaunch];
  int block_chunk[kBlocksPerLaunch];
};

template <class T>
__global__ void unscale_kernel(UnscaleBatch batch, float inv_scale, float* found_inf) {
  const int t = batch.block_tensor[blockIdx.x];
  T* p = static_cast<T*>(batch.data[t]);
  const int64_t begin = static_cast<int64_t>(batch.block_chunk[blockIdx.x]) * kChunk;
  const int64_t end = begin + kChunk < batch.numel[t] ? begin + kChunk : batch.numel[t];
  const auto inv = static_cast<compute_t<T>>(inv_scale);
  bool bad = false;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const compute_t<T> v = load(p + i);
    bad = bad || !isfinite(v);
    store(p + i, v * inv);
  }
  if (bad) *found_inf = 1.0f;  // every writer stores the same value
}

template <class T>
cudaError_t launch_batches(const ops::UnscaleArgs& a, cudaStream_t stream) {
  UnscaleBatch batch;
  int tensors = 0, blocks = 0;
  cudaError_t err = cudaSuccess;
  auto flush = [&] {
    if (blocks > 0 && err == cudaSuccess) {
      unscale_kernel<T><<<blocks, kBlock, 0, stream>>>(batch, a.inv_scale, a.found_inf);
      err = cudaGetLastError();
    }
    tensors = 0, blocks = 0;
  };
  auto add_tensor = [&](int k) {
    batch.data[tensors] = a.data[k];
    batch.numel[tensors] = a.numel[k];
    return tensors++;
  };
  for (int k = 0; k < a.count; ++k) {
    const int64_t n = a.numel[k];
    if (n == 0) continue;
    if (tensors == kTensorsPerLaunch) flush();
    int slot = add_tensor(k);
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      if (blocks == kBlocksPerLaunch) {  // a full launch: the rest of this tensor starts the next
        flush();
        slot = add_tensor(k);
      }
      batch.block_tensor[blocks] = static_cast<unsigned char>(slot);
      batch.block_chunk[blocks] = static_cast<int>(c);
      ++blocks;
    }
  }
  flush();
  return err;
}

}  // namespace

cudaError_t launch_unscale(const ops::UnscaleArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH_FLOAT(a.dtype, { err = launch_batches<scalar_t>(a, stream); });
  return err;
}

}  // namespace locus::cuda_backend
