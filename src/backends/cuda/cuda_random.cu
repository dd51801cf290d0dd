// rand, randn, randint and arange on CUDA: element i comes from runtime::random_value, the
// function the CPU kernel uses too, so the same seed gives the same tensor on every device.

#include "src/backends/cuda/device_types.cuh"
#include "src/ops/random_values.h"

namespace locus::cuda_backend {
namespace {

template <class T>
__global__ void __launch_bounds__(kBlock) random_kernel(ops::RandomArgs a) {
  T* out = reinterpret_cast<T*>(a.out);
  const int bits = runtime::mantissa_bits(a.dtype);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double v = runtime::random_element(a, bits, i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) out[i] = static_cast<T>(v);
    else out[i] = convert<T>(static_cast<compute_t<T>>(v));
  }
}

}  // namespace

cudaError_t launch_random(const ops::RandomArgs& p, cudaStream_t stream) {
  if (p.numel == 0) return cudaSuccess;
  const int64_t b = (p.numel + kBlock - 1) / kBlock;
  const auto grid = static_cast<unsigned>(b > 65536 ? 65536 : b);
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(p.dtype, {
    random_kernel<scalar_t><<<grid, kBlock, 0, stream>>>(p);
    err = cudaGetLastError();
  });
  return err;
}

}  // namespace locus::cuda_backend
