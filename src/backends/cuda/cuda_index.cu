// index_select and gather on CUDA. The indices are checked on the device by the front end
// (Note [Deferred checks]); an index out of range reads element 0 here.

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

// Elements move as raw words of their size: the dtype does not matter to a gather.
template <class W>
__global__ void __launch_bounds__(kBlock) index_kernel(ops::IndexArgs p) {
  const int64_t total = p.outer * p.out_dim * p.inner;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < total;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = r % p.inner;
    const int64_t j = (r / p.inner) % p.out_dim;
    const int64_t o = r / (p.inner * p.out_dim);
    int64_t k = p.op == ops::OpId::Gather ? p.index[r] : p.index[j];
    if (k < 0 || k >= p.in_dim) k = 0;  // reported by the deferred check; never read out of bounds
    reinterpret_cast<W*>(p.out)[r] = reinterpret_cast<const W*>(p.in)[(o * p.in_dim + k) * p.inner + i];
  }
}

unsigned grid_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

}  // namespace

cudaError_t launch_index(const ops::IndexArgs& p, cudaStream_t stream) {
  const int64_t total = p.outer * p.out_dim * p.inner;
  if (total == 0) return cudaSuccess;
  switch (itemsize(p.dtype)) {
    case 1: index_kernel<uint8_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
    case 2: index_kernel<uint16_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
    case 4: index_kernel<uint32_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
    default: index_kernel<uint64_t><<<grid_for(total), kBlock, 0, stream>>>(p); break;
  }
  return cudaGetLastError();
}

}  // namespace locus::cuda_backend
