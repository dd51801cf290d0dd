// A convolution's bias on CUDA, beside cuDNN's convolution (cuda_cudnn_conv.cpp): added to the
// output per channel in the forward, and its gradient, the per-channel sums of grad_output, in
// the backward. The sums run in a fixed order (one block per channel, a fixed tree), so the
// gradient is the same on every run, as every other Locus gradient.

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void __launch_bounds__(kThreads) add_bias_kernel(T* out, const T* bias, int64_t channels, int64_t plane,
                                                             int64_t n) {
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < n; k += int64_t{gridDim.x} * kThreads)
    store(out + k, load(out + k) + load(bias + k / plane % channels));
}

// Block c sums channel c of grad_output [N, C, plane]: each thread a strided share in order,
// then a tree over the block. float32 and the 16-bit types sum in float, float64 in double.
template <class T>
__global__ void __launch_bounds__(kThreads) bias_grad_kernel(const T* grad_out, T* grad_bias, int64_t images,
                                                              int64_t channels, int64_t plane) {
  using C = compute_t<T>;
  __shared__ C partial[kThreads];
  const int64_t c = blockIdx.x, per_channel = images * plane;
  C acc = 0;
  for (int64_t k = threadIdx.x; k < per_channel; k += kThreads) {
    const int64_t image = k / plane, at = k % plane;
    acc += load(grad_out + (image * channels + c) * plane + at);
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) store(grad_bias + c, partial[0]);
}

}  // namespace

cudaError_t launch_conv_bias(const ops::ConvArgs& a, cudaStream_t stream) {
  const int64_t plane = a.out_h * a.out_w;
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH_FLOAT(a.dtype, {
    if (a.pass == ops::ConvArgs::Pass::Forward) {
      const int64_t n = a.n * a.c_out * plane;
      if (n == 0) return cudaSuccess;
      add_bias_kernel<scalar_t><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
          reinterpret_cast<scalar_t*>(a.output), reinterpret_cast<const scalar_t*>(a.bias), a.c_out, plane, n);
    } else {
      if (a.c_out == 0) return cudaSuccess;
      bias_grad_kernel<scalar_t><<<static_cast<unsigned>(a.c_out), kThreads, 0, stream>>>(
          reinterpret_cast<const scalar_t*>(a.grad_output), reinterpret_cast<scalar_t*>(a.grad_bias), a.n, a.c_out,
          plane);
    }
    err = cudaGetLastError();
  });
  return err;
}

}  // namespace locus::cuda_backend
