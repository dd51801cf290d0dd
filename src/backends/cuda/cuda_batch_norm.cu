// Batch norm's per-channel passes on CUDA (BatchNormArgs, Note [Batch norm in training]): one
// block per channel for the statistics and the backward's sums (each thread a strided share in
// order, then a fixed tree, so the sums repeat bit for bit), and one thread per element for the
// normalisation and the input gradient. float32 accumulates in float, float64 in double.

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kThreads = 256;

// The block's sum of each thread's `v`, in a fixed tree; every thread gets it.
template <class T>
__device__ T block_sum(T v, T* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const T total = shared[0];
  __syncthreads();
  return total;
}

// Element k of channel c's values: sample k / inner, position k % inner.
__device__ __forceinline__ int64_t at(int64_t k, int64_t c, int64_t channels, int64_t inner) {
  return (k / inner * channels + c) * inner + k % inner;
}

template <class T>
__global__ void __launch_bounds__(kThreads) statistics_kernel(const T* x, T* mean_out, T* var_out, int64_t n,
                                                               int64_t channels, int64_t inner) {
  __shared__ T shared[kThreads];
  const int64_t c = blockIdx.x, count = n * inner;
  T s = 0;
  for (int64_t k = threadIdx.x; k < count; k += kThreads) s += x[at(k, c, channels, inner)];
  const T mean = block_sum(s, shared) / static_cast<T>(count);
  T squares = 0;
  for (int64_t k = threadIdx.x; k < count; k += kThreads) {
    const T d = x[at(k, c, channels, inner)] - mean;
    squares += d * d;
  }
  const T var = block_sum(squares, shared) / static_cast<T>(count);
  if (threadIdx.x == 0) mean_out[c] = mean, var_out[c] = var;
}

template <class T>
__global__ void __launch_bounds__(kThreads) backward_reduce_kernel(const T* x, const T* g, T* sum_g_out,
                                                                    T* sum_gx_out, int64_t n, int64_t channels,
                                                                    int64_t inner) {
  __shared__ T shared[kThreads];
  const int64_t c = blockIdx.x, count = n * inner;
  T sg = 0, sgx = 0;
  for (int64_t k = threadIdx.x; k < count; k += kThreads) {
    const int64_t i = at(k, c, channels, inner);
    sg += g[i];
    sgx += g[i] * x[i];
  }
  const T total_g = block_sum(sg, shared);
  const T total_gx = block_sum(sgx, shared);
  if (threadIdx.x == 0) sum_g_out[c] = total_g, sum_gx_out[c] = total_gx;
}

template <class T>
__global__ void __launch_bounds__(kThreads) backward_input_kernel(const T* x, const T* g, const T* a, const T* b,
                                                                   const T* c, T* out, int64_t channels,
                                                                   int64_t inner, int64_t total) {
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < total; k += int64_t{gridDim.x} * kThreads) {
    const int64_t ch = k / inner % channels;
    out[k] = g[k] * a[ch] + x[k] * b[ch] + c[ch];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) affine_kernel(const T* x, const T* a, const T* c, T* out, int64_t channels,
                                                          int64_t inner, int64_t total) {
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < total; k += int64_t{gridDim.x} * kThreads) {
    const int64_t ch = k / inner % channels;
    out[k] = x[k] * a[ch] + (c ? c[ch] : T(0));
  }
}

template <class T>
cudaError_t launch(const ops::BatchNormArgs& a, cudaStream_t stream) {
  const T* x = reinterpret_cast<const T*>(a.x);
  const T* g = reinterpret_cast<const T*>(a.grad);
  const int64_t total = a.n * a.channels * a.inner;
  if (total == 0) return cudaSuccess;
  switch (a.pass) {
    case ops::BatchNormArgs::Pass::Statistics:
      statistics_kernel<T><<<static_cast<unsigned>(a.channels), kThreads, 0, stream>>>(
          x, reinterpret_cast<T*>(a.first), reinterpret_cast<T*>(a.second), a.n, a.channels, a.inner);
      break;
    case ops::BatchNormArgs::Pass::BackwardReduce:
      backward_reduce_kernel<T><<<static_cast<unsigned>(a.channels), kThreads, 0, stream>>>(
          x, g, reinterpret_cast<T*>(a.first), reinterpret_cast<T*>(a.second), a.n, a.channels, a.inner);
      break;
    case ops::BatchNormArgs::Pass::BackwardInput:
      backward_input_kernel<T><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
          x, g, reinterpret_cast<const T*>(a.a), reinterpret_cast<const T*>(a.b), reinterpret_cast<const T*>(a.c),
          reinterpret_cast<T*>(a.out), a.channels, a.inner, total);
      break;
    case ops::BatchNormArgs::Pass::Affine:
      affine_kernel<T><<<blocks_for(total, kThreads), kThreads, 0, stream>>>(
          x, reinterpret_cast<const T*>(a.a), reinterpret_cast<const T*>(a.c), reinterpret_cast<T*>(a.out), a.channels,
          a.inner, total);
      break;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_batch_norm(const ops::BatchNormArgs& a, cudaStream_t stream) {
  return a.dtype == DType::Float64 ? launch<double>(a, stream) : launch<float>(a, stream);
}

}  // namespace locus::cuda_backend
