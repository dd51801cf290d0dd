#pragma once
// Reductions across a group of G threads (1, a warp, or a 256-thread block) with any
// associative combine, used by the sum, extreme and softmax kernels.

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {

/// __shfl_down_sync for any arithmetic type (narrow integers and bool travel as int).
template <class T>
__device__ __forceinline__ T shfl_down(T v, int delta) {
  if constexpr (sizeof(T) < 4) return static_cast<T>(__shfl_down_sync(0xffffffffu, static_cast<int>(v), delta));
  else return __shfl_down_sync(0xffffffffu, v, delta);
}

/// Folds the values of G consecutive threads into lane 0 of the group with `combine(a, b)`.
/// G = 256 uses `scratch` (32 entries of V) and must be called by the whole block.
template <int G, class V, class Combine>
__device__ __forceinline__ V group_reduce(V v, Combine combine, std::type_identity_t<V>* scratch) {
  if constexpr (G == 1) {
    return v;
  } else {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v = combine(v, v.shuffled_down(d));
    if constexpr (G == 32) {
      return v;
    } else {
      const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
      __syncthreads();  // scratch may still be read by a previous call
      if (lane == 0) scratch[warp] = v;
      __syncthreads();
      if (warp == 0) {
        v = scratch[lane < G / 32 ? lane : 0];
        if (lane >= G / 32) v = V::identity_like(v);
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) v = combine(v, v.shuffled_down(d));
      }
      return v;
    }
  }
}

/// Hands the value of the group's first thread to every thread of the group (after
/// group_reduce, whose result only lane 0 holds). G = 256 uses `slot` and needs the whole block.
template <int G, class T>
__device__ __forceinline__ T group_broadcast(T v, T* slot) {
  if constexpr (G == 1) {
    return v;
  } else if constexpr (G == 32) {
    return __shfl_sync(0xffffffffu, v, 0);
  } else {
    if (threadIdx.x == 0) *slot = v;
    __syncthreads();
    return *slot;
  }
}

/// A running sum in accumulator type A.
template <class A>
struct SumValue {
  A v;
  __device__ SumValue shuffled_down(int d) const { return {shfl_down(v, d)}; }
  __device__ static SumValue identity_like(const SumValue&) { return {A(0)}; }
};

}  // namespace locus::cuda_backend
