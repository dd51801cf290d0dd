#pragma once
// The one elementwise loop every CUDA elementwise kernel uses: kPerThread elements per thread,
// 16-byte vector loads and stores when every operand is contiguous and aligned, the shared
// broadcast/stride description otherwise.

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {

/// out[i] = f(in_0[i], ..., in_{NIn-1}[i]) for all inputs of storage type In. `f` takes an
/// array of compute values and returns something convertible to Out's compute type.
template <class Out, class In, int NIn, class F>
__global__ void __launch_bounds__(kBlock) elementwise_kernel(IterParams p, bool contiguous, bool vectorized, F f) {
  const int64_t n = p.numel;
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
  if (base >= n) return;
  using CI = compute_t<In>;
  if (contiguous) {
    Out* out = reinterpret_cast<Out*>(p.data[0]);
    if (vectorized && base + kPerThread <= n) {
      Pack<In> x[NIn > 0 ? NIn : 1];
#pragma unroll
      for (int k = 0; k < NIn; ++k) x[k] = *reinterpret_cast<const Pack<In>*>(reinterpret_cast<const In*>(p.data[k + 1]) + base);
      Pack<Out> y;
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) {
        CI v[NIn > 0 ? NIn : 1];
#pragma unroll
        for (int k = 0; k < NIn; ++k) v[k] = load(&x[k].v[j]);
        y.v[j] = convert<Out>(f(v));
      }
      *reinterpret_cast<Pack<Out>*>(out + base) = y;
      return;
    }
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t i = base + j;
      if (i >= n) break;
      CI v[NIn > 0 ? NIn : 1];
#pragma unroll
      for (int k = 0; k < NIn; ++k) v[k] = load(reinterpret_cast<const In*>(p.data[k + 1]) + i);
      out[i] = convert<Out>(f(v));
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < kPerThread; ++j) {
    const int64_t i = base + j;
    if (i >= n) break;
    const Offsets<NIn + 1> o = offsets_of<NIn + 1>(p, i);
    CI v[NIn > 0 ? NIn : 1];
#pragma unroll
    for (int k = 0; k < NIn; ++k) v[k] = load(reinterpret_cast<const In*>(p.data[k + 1] + o.off[k + 1]));
    *reinterpret_cast<Out*>(p.data[0] + o.off[0]) = convert<Out>(f(v));
  }
}

/// True when every operand runs with unit element stride over one dim.
inline bool is_contiguous(const IterParams& p, const int* itemsizes) {
  if (p.ndim != 1) return p.ndim == 0;
  for (int k = 0; k < p.noperands; ++k)
    if (p.strides[k][0] != itemsizes[k]) return false;
  return true;
}

/// Launches elementwise_kernel over `p`, choosing the contiguous and vector paths.
template <class Out, class In, int NIn, class F>
cudaError_t launch_elementwise(const IterParams& p, F f, cudaStream_t stream) {
  if (p.numel == 0) return cudaSuccess;
  int sizes[kMaxOperands] = {static_cast<int>(sizeof(Out))};
  for (int k = 1; k <= NIn; ++k) sizes[k] = static_cast<int>(sizeof(In));
  const bool contiguous = is_contiguous(p, sizes);
  bool vectorized = contiguous && vector_aligned<Out>(p.data[0]);
  for (int k = 1; k <= NIn; ++k) vectorized = vectorized && vector_aligned<In>(p.data[k]);
  const unsigned grid = blocks_for(p.numel, int64_t{kBlock} * kPerThread);
  elementwise_kernel<Out, In, NIn, F><<<grid, kBlock, 0, stream>>>(p, contiguous, vectorized, f);
  return cudaGetLastError();
}

}  // namespace locus::cuda_backend
