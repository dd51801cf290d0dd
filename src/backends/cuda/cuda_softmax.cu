// Softmax and log-softmax on CUDA, numerically stable: the row maximum is subtracted before
// exponentiating, and log-softmax is x - max - log(sum exp(x - max)) rather than log of the
// softmax, so it never takes log(0) for very negative inputs.
//
// A row along the softmax dim is handled by a warp (short rows) or a block (long rows) when
// that dim is the innermost one; otherwise one thread per (outer, inner) position walks the
// dim, so neighbouring threads read neighbouring addresses.

#include <cmath>

#include "src/backends/cuda/group_reduce.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kThreads = 256;

template <class C>
struct MaxValue {
  C v;
  __device__ MaxValue shuffled_down(int d) const { return {shfl_down(v, d)}; }
  __device__ static MaxValue identity_like(const MaxValue&) { return {-INFINITY}; }
};

template <class C>
__device__ __forceinline__ C max_nan(C a, C b) {
  return (a != a || a > b) ? a : b;  // NaN wins, so a row with NaN gives NaN
}

template <class T, int G>
__global__ void __launch_bounds__(kThreads) softmax_rows_kernel(ops::SoftmaxArgs p) {
  using C = compute_t<T>;
  __shared__ MaxValue<C> max_scratch[32];
  __shared__ SumValue<C> sum_scratch[32];
  __shared__ C row_max, row_sum;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (kThreads / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = row < p.outer;
  const T* in = reinterpret_cast<const T*>(p.in) + (active ? row : 0) * p.dim;
  T* out = reinterpret_cast<T*>(p.out) + (active ? row : 0) * p.dim;
  C m = -INFINITY;
  if (active)
    for (int64_t j = lane; j < p.dim; j += G) m = max_nan(m, load(in + j));
  m = group_reduce<G>(MaxValue<C>{m}, [](MaxValue<C> a, MaxValue<C> b) { return MaxValue<C>{max_nan(a.v, b.v)}; },
                      max_scratch).v;
  m = group_broadcast<G>(m, &row_max);
  // An all -inf row has max -inf; subtracting it would give NaN, so shift by 0 instead.
  const C shift = m == -INFINITY ? C(0) : m;
  C s = 0;
  if (active)
    for (int64_t j = lane; j < p.dim; j += G) s += ::exp(load(in + j) - shift);
  s = group_reduce<G>(SumValue<C>{s}, [](SumValue<C> a, SumValue<C> b) { return SumValue<C>{a.v + b.v}; }, sum_scratch).v;
  s = group_broadcast<G>(s, &row_sum);
  if (!active) return;
  const C log_sum = ::log(s);
  const C inv = C(1) / s;
  for (int64_t j = lane; j < p.dim; j += G) {
    const C x = load(in + j) - shift;
    store(out + j, p.log ? x - log_sum : ::exp(x) * inv);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) softmax_strided_kernel(ops::SoftmaxArgs p) {
  using C = compute_t<T>;
  const int64_t q = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (q >= p.outer * p.inner) return;
  const int64_t o = q / p.inner, i = q % p.inner;
  const T* in = reinterpret_cast<const T*>(p.in) + o * p.dim * p.inner + i;
  T* out = reinterpret_cast<T*>(p.out) + o * p.dim * p.inner + i;
  C m = -INFINITY;
  for (int64_t j = 0; j < p.dim; ++j) m = max_nan(m, load(in + j * p.inner));
  const C shift = m == -INFINITY ? C(0) : m;
  C s = 0;
  for (int64_t j = 0; j < p.dim; ++j) s += ::exp(load(in + j * p.inner) - shift);
  const C log_sum = ::log(s), inv = C(1) / s;
  for (int64_t j = 0; j < p.dim; ++j) {
    const C x = load(in + j * p.inner) - shift;
    store(out + j * p.inner, p.log ? x - log_sum : ::exp(x) * inv);
  }
}

template <class T>
cudaError_t softmax_typed(const ops::SoftmaxArgs& p, cudaStream_t stream) {
  if (p.inner == 1) {
    if (p.dim <= 1024) {
      const auto blocks = static_cast<unsigned>((p.outer + kThreads / 32 - 1) / (kThreads / 32));
      softmax_rows_kernel<T, 32><<<blocks, kThreads, 0, stream>>>(p);
    } else {
      softmax_rows_kernel<T, kThreads><<<static_cast<unsigned>(p.outer), kThreads, 0, stream>>>(p);
    }
  } else {
    softmax_strided_kernel<T><<<blocks_for(p.outer * p.inner, kThreads), kThreads, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_softmax(const ops::SoftmaxArgs& p, cudaStream_t stream) {
  if (p.outer * p.dim * p.inner == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH_FLOAT(p.dtype, err = softmax_typed<scalar_t>(p, stream));
  return err;
}

}  // namespace locus::cuda_backend
