// Max, min, argmax and argmin on CUDA: the groups and splits of Note [CUDA reductions]
// (cuda_reduce.cu), each thread keeping the best value and its index.

#include "src/backends/cuda/group_reduce.cuh"
#include "src/backends/cuda/reduce_plan.cuh"

namespace locus::cuda_backend {
namespace {

/// Max / min / argmax / argmin along the middle dim of a contiguous [outer, dim, inner] input,
/// as a kernel argument.
struct Extreme {
  bool is_min = false;
  DType dtype = DType::Float32;
  const char* in = nullptr;
  char* values = nullptr;      ///< null for argmax / argmin
  int64_t* indices = nullptr;  ///< null when only values are wanted
  int64_t outer = 0, dim = 0, inner = 0;
};

Extreme extreme_of(const ops::ReduceArgs& a) {
  Extreme e;
  const bool arg = a.op == ops::OpId::Argmax || a.op == ops::OpId::Argmin;
  e.is_min = a.op == ops::OpId::Min || a.op == ops::OpId::Argmin;
  e.dtype = a.in_dtype;
  e.in = a.in;
  e.values = arg ? nullptr : a.out;
  e.indices = reinterpret_cast<int64_t*>(arg ? a.out : a.indices);
  e.outer = a.shape[0], e.dim = a.shape[1], e.inner = a.shape[2];
  return e;
}

template <class C>
struct Best {
  C v;
  int64_t i;  ///< -1: nothing seen yet
  __device__ Best shuffled_down(int d) const { return {shfl_down(v, d), shfl_down(i, d)}; }
  __device__ static Best identity_like(const Best& b) { return {b.v, -1}; }
};

/// True when a should win over b: NaN first (as PyTorch), then the larger (smaller for min)
/// value, then the lower index, so ties resolve to the first occurrence.
template <class C>
__device__ __forceinline__ bool wins(bool is_min, const Best<C>& a, const Best<C>& b) {
  if (a.i < 0) return false;
  if (b.i < 0) return true;
  if constexpr (std::is_floating_point_v<C>) {
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) return an && (!bn || a.i < b.i);
  }
  if (a.v == b.v) return a.i < b.i;
  return is_min ? a.v < b.v : a.v > b.v;
}

template <class T, int G>
__global__ void __launch_bounds__(kThreads) extreme_kernel(Extreme p, Plan plan, Best<compute_t<T>>* partial) {
  using C = compute_t<T>;
  __shared__ Best<C> scratch[32];
  const bool is_min = p.is_min;
  const int64_t q = static_cast<int64_t>(blockIdx.x) * (kThreads / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = q < plan.outputs;
  Best<C> best{C(0), -1};
  if (active) {
    const int64_t o = q / p.inner, i = q % p.inner;
    const T* in = reinterpret_cast<const T*>(p.in) + o * p.dim * p.inner + i;
    const int64_t begin = blockIdx.y * plan.chunk;
    const int64_t end = std::min(begin + plan.chunk, plan.reduce_numel);
    for (int64_t r = begin + lane; r < end; r += G) {
      const Best<C> cand{load(in + r * p.inner), r};
      if (wins(is_min, cand, best)) best = cand;
    }
  }
  best = group_reduce<G>(best, [is_min](Best<C> a, Best<C> b) { return wins(is_min, b, a) ? b : a; }, scratch);
  if (!active || lane != 0) return;
  if (partial) {
    partial[blockIdx.y * plan.outputs + q] = best;
    return;
  }
  if (p.values) reinterpret_cast<T*>(p.values)[q] = convert<T>(best.v);
  if (p.indices) p.indices[q] = best.i;
}

template <class T>
__global__ void __launch_bounds__(kThreads) extreme_finish_kernel(Extreme p, Plan plan, const Best<compute_t<T>>* partial) {
  using C = compute_t<T>;
  const bool is_min = p.is_min;
  const int64_t q = static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (q >= plan.outputs) return;
  Best<C> best{C(0), -1};
  for (int64_t s = lane; s < plan.splits; s += 32) {
    const Best<C> cand = partial[s * plan.outputs + q];
    if (wins(is_min, cand, best)) best = cand;
  }
  best = group_reduce<32>(best, [is_min](Best<C> a, Best<C> b) { return wins(is_min, b, a) ? b : a; }, nullptr);
  if (lane != 0) return;
  if (p.values) reinterpret_cast<T*>(p.values)[q] = convert<T>(best.v);
  if (p.indices) p.indices[q] = best.i;
}

Plan extreme_plan(const Extreme& p, int sm_count) {
  return make_plan(p.outer * p.inner, p.dim, p.inner == 1, sm_count);
}

template <class T>
cudaError_t extreme_typed(const Extreme& p, void* workspace, int sm_count, cudaStream_t stream) {
  using C = compute_t<T>;
  const Plan plan = extreme_plan(p, sm_count);
  auto* partial = plan.splits > 1 ? static_cast<Best<C>*>(workspace) : nullptr;
  const dim3 grid = grid_of(plan);
  switch (plan.group) {
    case 1: extreme_kernel<T, 1><<<grid, kThreads, 0, stream>>>(p, plan, partial); break;
    case 32: extreme_kernel<T, 32><<<grid, kThreads, 0, stream>>>(p, plan, partial); break;
    default: extreme_kernel<T, kThreads><<<grid, kThreads, 0, stream>>>(p, plan, partial); break;
  }
  if (partial) {
    const auto blocks = static_cast<unsigned>((plan.outputs + kThreads / 32 - 1) / (kThreads / 32));
    extreme_finish_kernel<T><<<blocks, kThreads, 0, stream>>>(p, plan, partial);
  }
  return cudaGetLastError();
}

}  // namespace

size_t extreme_workspace_bytes(const ops::ReduceArgs& a, int sm_count) {
  const Extreme e = extreme_of(a);
  if (e.outer * e.inner == 0 || e.dim == 0) return 0;  // make_plan divides by the reduced length
  const Plan plan = extreme_plan(e, sm_count);
  if (plan.splits <= 1) return 0;
  size_t item = 0;
  LOCUS_CUDA_DISPATCH(e.dtype, item = sizeof(Best<compute_t<scalar_t>>));
  return static_cast<size_t>(plan.splits * plan.outputs) * item;
}

cudaError_t launch_extreme(const ops::ReduceArgs& a, void* workspace, int sm_count, cudaStream_t stream) {
  const Extreme e = extreme_of(a);
  if (e.outer * e.inner == 0 || e.dim == 0) return cudaSuccess;
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH(e.dtype, err = extreme_typed<scalar_t>(e, workspace, sm_count, stream));
  return err;
}

}  // namespace locus::cuda_backend
