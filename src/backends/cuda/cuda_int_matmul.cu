// Integer matrix products on CUDA. cuBLAS has no int64/int32 GEMM for general use (PyTorch's
// CUDA backend refuses integer matmul for that reason); Locus keeps every dtype on every device
// with a shared-memory tiled kernel. Sums wrap modulo 2^bits, exactly as the CPU loop does.

#include <algorithm>

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kTile = 16;

// One launch covers rows [row0, row0 + gridDim.y * kTile) of every batch in [batch0, ...).
template <class T>
__global__ void int_matmul_kernel(ops::MatmulArgs p, int64_t batch0, int64_t row0) {
  __shared__ int64_t as[kTile][kTile];
  __shared__ int64_t bs[kTile][kTile];
  const int64_t batch = batch0 + blockIdx.z;
  const int64_t row = row0 + static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  const T* a = reinterpret_cast<const T*>(p.a) + batch * p.a_batch_stride;
  const T* b = reinterpret_cast<const T*>(p.b) + batch * p.b_batch_stride;
  uint64_t acc = 0;  // unsigned: wrap-around is defined
  for (int64_t k0 = 0; k0 < p.k; k0 += kTile) {
    const int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = row < p.m && ka < p.k ? static_cast<int64_t>(a[row * p.a_row + ka * p.a_col]) : 0;
    bs[threadIdx.y][threadIdx.x] = kb < p.k && col < p.n ? static_cast<int64_t>(b[kb * p.b_row + col * p.b_col]) : 0;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k)
      acc += static_cast<uint64_t>(as[threadIdx.y][k]) * static_cast<uint64_t>(bs[k][threadIdx.x]);
    __syncthreads();
  }
  if (row < p.m && col < p.n)
    reinterpret_cast<T*>(p.c)[batch * p.m * p.n + row * p.n + col] = static_cast<T>(static_cast<int64_t>(acc));
}

}  // namespace

cudaError_t launch_int_matmul(const ops::MatmulArgs& p, cudaStream_t stream) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return cudaSuccess;
  // Grid limits: y and z take at most 65535 blocks, so tall products and long batches are cut
  // into several launches (an uncut grid.y failed for m > 1,048,560).
  constexpr int64_t kMaxGrid = 65535;
  const dim3 block(kTile, kTile);
  const int64_t row_blocks = (p.m + kTile - 1) / kTile;
  for (int64_t b0 = 0; b0 < p.batch; b0 += kMaxGrid) {
    for (int64_t r0 = 0; r0 < row_blocks; r0 += kMaxGrid) {
      const dim3 grid(static_cast<unsigned>((p.n + kTile - 1) / kTile),
                      static_cast<unsigned>(std::min(kMaxGrid, row_blocks - r0)),
                      static_cast<unsigned>(std::min(kMaxGrid, p.batch - b0)));
      switch (p.dtype) {
        case DType::UInt8: int_matmul_kernel<uint8_t><<<grid, block, 0, stream>>>(p, b0, r0 * kTile); break;
        case DType::Int8: int_matmul_kernel<int8_t><<<grid, block, 0, stream>>>(p, b0, r0 * kTile); break;
        case DType::Int16: int_matmul_kernel<int16_t><<<grid, block, 0, stream>>>(p, b0, r0 * kTile); break;
        case DType::Int32: int_matmul_kernel<int32_t><<<grid, block, 0, stream>>>(p, b0, r0 * kTile); break;
        case DType::Int64: int_matmul_kernel<int64_t><<<grid, block, 0, stream>>>(p, b0, r0 * kTile); break;
        default: return cudaErrorInvalidValue;
      }
      if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    }
  }
  return cudaSuccess;
}

}  // namespace locus::cuda_backend
