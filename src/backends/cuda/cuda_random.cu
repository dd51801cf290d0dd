// rand, randn, randint and arange on CUDA: element i is a function of (seed, offset + i) only
// (Philox, src/runtime/philox.h), computed in double exactly as the CPU kernel does, so the
// same seed gives the same tensor on every device.

#include <cmath>

#include "src/backends/cuda/device_types.cuh"
#include "src/runtime/philox.h"

namespace locus::cuda_backend {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

__device__ __forceinline__ double uniform53(uint32_t lo, uint32_t hi) {
  return static_cast<double>(((uint64_t{hi} << 32) | lo) >> 11) * 0x1.0p-53;
}

template <class T>
constexpr int kMantissaBits = std::is_same_v<T, double> ? 53
                              : std::is_same_v<T, __half> ? 11
                              : std::is_same_v<T, __nv_bfloat16> ? 8
                                                                  : 24;

template <class T>
__global__ void __launch_bounds__(kBlock) random_kernel(RandomParams a) {
  T* out = reinterpret_cast<T*>(a.out);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double v;
    if (a.op == ops::OpId::Arange) {
      v = a.low + static_cast<double>(i) * a.high;
    } else {
      const runtime::Philox4 r = runtime::philox4x32(a.seed, a.offset + static_cast<uint64_t>(i));
      if (a.op == ops::OpId::Rand) {
        v = kMantissaBits<T> >= 53 ? uniform53(r[0], r[1])
                                   : ::ldexp(static_cast<double>(r[0] >> (32 - kMantissaBits<T>)), -kMantissaBits<T>);
      } else if (a.op == ops::OpId::Randn) {
        const double u1 = 1.0 - uniform53(r[0], r[1]);
        v = ::sqrt(-2.0 * ::log(u1)) * ::cos(kTwoPi * uniform53(r[2], r[3]));
      } else {
        const auto range = static_cast<uint64_t>(a.high - a.low);
        v = a.low + static_cast<double>(((uint64_t{r[1]} << 32) | r[0]) % range);
      }
    }
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) out[i] = static_cast<T>(v);
    else out[i] = convert<T>(static_cast<compute_t<T>>(v));
  }
}

}  // namespace

cudaError_t launch_random(const RandomParams& p, cudaStream_t stream) {
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
