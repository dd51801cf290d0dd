// index_select and gather on CUDA, and the scatters (scatter, scatter_add, index_add). The
// indices are checked on the device by the front end (Note [Deferred checks]); an index out of
// range reads element 0 here, and a scatter skips it.

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

// Adds v to *p atomically. float, double, the 16-bit floats (sm_70/sm_80 and up; the build
// targets sm_90), int32 and int64 have hardware atomics; the 1- and 2-byte integers and bool
// update their aligned 32-bit word by compare-and-swap.
template <class T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, __half> ||
                std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: an unsigned add of the same bits is the signed add, wrapping alike.
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    static_assert(sizeof(T) <= 2, "wider types have hardware atomics above");
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    const unsigned mask = ((1u << (sizeof(T) * 8)) - 1u) << shift;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      T cur;
      const auto bits = static_cast<unsigned short>((assumed & mask) >> shift);
      memcpy(&cur, &bits, sizeof(T));  // little-endian: the low bytes of `bits` are the element
      T sum;
      if constexpr (std::is_same_v<T, bool>) sum = cur || v;
      else sum = static_cast<T>(cur + v);
      unsigned short out_bits = 0;
      memcpy(&out_bits, &sum, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | ((static_cast<unsigned>(out_bits) << shift) & mask));
    } while (old != assumed);
  }
}

// One thread per element of `in`: Scatter stores (one of several writers to a position wins, as
// in PyTorch), ScatterAdd and IndexAdd add atomically, so repeated indices add up in an order
// that can change between runs (float sums may differ in the last bits; the CPU's are
// deterministic, Note [Deterministic scatters] in cpu_index.cpp).
template <class T>
__global__ void __launch_bounds__(kBlock) scatter_kernel(ops::IndexArgs p) {
  const int64_t total = p.outer * p.in_dim * p.inner;
  const auto* in = reinterpret_cast<const T*>(p.in);
  auto* out = reinterpret_cast<T*>(p.out);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < total;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = r % p.inner;
    const int64_t j = (r / p.inner) % p.in_dim;
    const int64_t o = r / (p.inner * p.in_dim);
    const int64_t k = p.op == ops::OpId::IndexAdd ? p.index[j] : p.index[r];
    if (k < 0 || k >= p.out_dim) continue;  // reported by the deferred check
    T* dst = out + (o * p.out_dim + k) * p.inner + i;
    if (p.op == ops::OpId::Scatter) *dst = in[r];
    else atomic_add(dst, in[r]);
  }
}

unsigned grid_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

}  // namespace

cudaError_t launch_index(const ops::IndexArgs& p, cudaStream_t stream) {
  if (p.op == ops::OpId::Scatter || p.op == ops::OpId::ScatterAdd || p.op == ops::OpId::IndexAdd) {
    const int64_t n = p.outer * p.in_dim * p.inner;
    if (n == 0) return cudaSuccess;
    LOCUS_CUDA_DISPATCH(p.dtype, (scatter_kernel<scalar_t><<<grid_for(n), kBlock, 0, stream>>>(p)));
    return cudaGetLastError();
  }
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
