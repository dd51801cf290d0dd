#pragma once
// The one elementwise loop every CUDA elementwise kernel uses: kPerThread elements per thread,
// 16-byte vector loads and stores when every operand is contiguous and aligned, the shared
// broadcast/stride description otherwise.

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {

/// kPerThread values of one operand, held in registers (only ever indexed by constants).
template <class T>
struct Vec {
  T v[kPerThread];
};

/// Applies `f` elementwise: each thread loads kPerThread elements of every input (one 16-byte
/// vector load per operand when all are contiguous and aligned, the strided walk otherwise),
/// computes them with one call `f(in)` and stores the first `count`. Lanes past the end of
/// the tensor compute on zeros and are not stored. The compute is one call site per kernel, so
/// a functor that switches over many ops (cuda_unary.cu) is compiled once per kernel, not once
/// per load path. `f` takes `const Vec<compute_t<In>> (&in)[NIn]` and returns a Vec of
/// F::value_type (convertible to Out).
template <class Out, class In, int NIn, class F>
__global__ void __launch_bounds__(kBlock) elementwise_kernel(PackedIter p, bool contiguous, bool vectorized, F f) {
  const int64_t n = p.numel;
  const int64_t base = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
  if (base >= n) return;
  using CI = compute_t<In>;
  const int count = n - base < kPerThread ? static_cast<int>(n - base) : kPerThread;
  Vec<CI> in[NIn > 0 ? NIn : 1] = {};
  const bool packed = contiguous && vectorized && count == kPerThread;
  int64_t out_off[kPerThread] = {};
  if (packed) {
#pragma unroll
    for (int k = 0; k < NIn; ++k) {
      const Pack<In> x = *reinterpret_cast<const Pack<In>*>(reinterpret_cast<const In*>(p.data[k + 1]) + base);
#pragma unroll
      for (int j = 0; j < kPerThread; ++j) in[k].v[j] = load(&x.v[j]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      if (j < count) {
        const int64_t i = base + j;
        if (contiguous) {
          out_off[j] = i * static_cast<int64_t>(sizeof(Out));
#pragma unroll
          for (int k = 0; k < NIn; ++k) in[k].v[j] = load(reinterpret_cast<const In*>(p.data[k + 1]) + i);
        } else {
          const Offsets<NIn + 1> o = offsets_of<NIn + 1>(p, i);
          out_off[j] = o.off[0];
#pragma unroll
          for (int k = 0; k < NIn; ++k) in[k].v[j] = load(reinterpret_cast<const In*>(p.data[k + 1] + o.off[k + 1]));
        }
      }
    }
  }
  const auto result = f(in);
  if (packed) {
    Pack<Out> y;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) y.v[j] = convert<Out>(result.v[j]);
    *reinterpret_cast<Pack<Out>*>(reinterpret_cast<Out*>(p.data[0]) + base) = y;
    return;
  }
#pragma unroll
  for (int j = 0; j < kPerThread; ++j)
    if (j < count) *reinterpret_cast<Out*>(p.data[0] + out_off[j]) = convert<Out>(result.v[j]);
}

/// Adapts a per-element callable `g(const CI (&v)[NIn])` returning G::value_type to the Vec
/// form, for simple kernels (conversions) whose body is small enough to repeat per element.
template <class G>
struct PerElement {
  G g;
  using value_type = typename G::value_type;
  template <class CI, int NIn>
  __device__ __forceinline__ Vec<value_type> operator()(const Vec<CI> (&in)[NIn]) const {
    Vec<value_type> out;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      CI v[NIn];
#pragma unroll
      for (int k = 0; k < NIn; ++k) v[k] = in[k].v[j];
      out.v[j] = g(v);
    }
    return out;
  }
};

/// True when every operand runs with unit element stride over one dim.
inline bool is_contiguous(const PackedIter& p, const int* itemsizes) {
  if (p.ndim != 1) return p.ndim == 0;
  for (int k = 0; k < p.noperands; ++k)
    if (p.strides[k][0] != itemsizes[k]) return false;
  return true;
}

/// Launches elementwise_kernel over `p`, choosing the contiguous and vector paths.
template <class Out, class In, int NIn, class F>
cudaError_t launch_packed(const PackedIter& p, F f, cudaStream_t stream) {
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
