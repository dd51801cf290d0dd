// Sum, mean and the other reductions of the op table (folds of their functors) on CUDA; max, min,
// argmax and argmin are in cuda_reduce_extreme.cu, on the same plans (reduce_plan.cuh).
//
// Note [CUDA reductions]
// Each output is folded by a group of G threads: one thread when neighbouring outputs are
// neighbours in memory (reducing an outer dim: threads of a warp then read consecutive
// addresses), a warp or a whole block when the reduced dim is the fast one. When there are too
// few outputs to fill the GPU, the reduced range is also split across blockIdx.y into partial
// results in a workspace, which a second kernel folds: a full reduction of 2^28 floats runs
// on every SM instead of one. Results are deterministic: no atomics, a fixed split and a fixed
// folding order for a given shape and GPU. Floating sums accumulate in float (double for
// float64), as PyTorch does; integer sums in int64.

#include <algorithm>
#include <string>

#include "locus/errors.h"

#include "src/backends/cuda/group_reduce.cuh"
#include "src/backends/cuda/reduce_plan.cuh"
#include "src/ops/reduce_rules.h"

namespace locus::cuda_backend {
namespace {

template <class T>
using acc_t = std::conditional_t<std::is_same_v<compute_t<T>, double>, double,
                                 std::conditional_t<is_float_v<T>, float, int64_t>>;

// ---- sum and mean ---------------------------------------------------------------------------

/// The input split into kept dims (row-major order of the output) and reduced dims, with
/// byte strides; adjacent dims that walk memory as one are merged.
struct SumLayout {
  int nkept = 0, nred = 0;
  int64_t kept_shape[kMaxDims], kept_stride[kMaxDims];
  int64_t red_shape[kMaxDims], red_stride[kMaxDims];
};

void push_dim(int& n, int64_t* shape, int64_t* stride, int64_t size, int64_t st) {
  if (n > 0 && stride[n - 1] == st * size) {
    shape[n - 1] *= size;
    stride[n - 1] = st;
    return;
  }
  shape[n] = size;
  stride[n] = st;
  ++n;
}

SumLayout layout_of(const ops::ReduceArgs& a) {
  SumLayout l;
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (a.out_strides[d] == 0) push_dim(l.nred, l.red_shape, l.red_stride, a.shape[d], a.in_strides[d]);
    else push_dim(l.nkept, l.kept_shape, l.kept_stride, a.shape[d], a.in_strides[d]);
  }
  return l;
}

bool reduce_dim_is_fast(const SumLayout& l) {
  if (l.nkept == 0) return true;
  if (l.nred == 0) return false;
  auto smallest = [](const int64_t* s, int n) {
    int64_t m = INT64_MAX;
    for (int i = 0; i < n; ++i) m = std::min(m, s[i] < 0 ? -s[i] : s[i]);
    return m;
  };
  return smallest(l.red_stride, l.nred) <= smallest(l.kept_stride, l.nkept);
}

__device__ __forceinline__ int64_t offset_in(int64_t index, int n, const int64_t* shape, const int64_t* stride) {
  if (n == 1) return index * stride[0];
  int64_t off = 0;
  for (int d = n - 1; d >= 0; --d) {
    off += (index % shape[d]) * stride[d];
    index /= shape[d];
  }
  return off;
}

template <class A>
__device__ __forceinline__ void store_result(char* out, DType dt, int64_t o, A v) {
  LOCUS_CUDA_DISPATCH(dt, reinterpret_cast<scalar_t*>(out)[o] = convert<scalar_t>(v));
}

template <class T, int G>
__global__ void __launch_bounds__(kThreads) sum_kernel(SumLayout l, Plan plan, const char* in, char* out, DType out_dt,
                                                       bool mean, acc_t<T>* partial) {
  using A = acc_t<T>;
  __shared__ SumValue<A> scratch[32];
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kThreads / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = o < plan.outputs;
  A acc = 0;
  if (active) {
    const char* base = in + offset_in(o, l.nkept, l.kept_shape, l.kept_stride);
    const int64_t begin = blockIdx.y * plan.chunk;
    const int64_t end = std::min(begin + plan.chunk, plan.reduce_numel);
    int64_t r = begin + lane;
    if (l.nred == 1) {
      // One reduced dim (the usual case): four independent loads in flight per thread.
      const int64_t st = l.red_stride[0];
      A a1 = 0, a2 = 0, a3 = 0;
      for (; r + 3 * G < end; r += 4 * G) {
        acc += static_cast<A>(load(reinterpret_cast<const T*>(base + r * st)));
        a1 += static_cast<A>(load(reinterpret_cast<const T*>(base + (r + G) * st)));
        a2 += static_cast<A>(load(reinterpret_cast<const T*>(base + (r + 2 * G) * st)));
        a3 += static_cast<A>(load(reinterpret_cast<const T*>(base + (r + 3 * G) * st)));
      }
      acc += a1 + a2 + a3;
    }
    for (; r < end; r += G)
      acc += static_cast<A>(load(reinterpret_cast<const T*>(base + offset_in(r, l.nred, l.red_shape, l.red_stride))));
  }
  const SumValue<A> total = group_reduce<G>(SumValue<A>{acc}, [](SumValue<A> a, SumValue<A> b) { return SumValue<A>{a.v + b.v}; },
                                            scratch);
  if (!active || lane != 0) return;
  if (partial) {
    partial[blockIdx.y * plan.outputs + o] = total.v;
  } else if (mean) {
    store_result(out, out_dt, o, static_cast<double>(total.v) / static_cast<double>(plan.reduce_numel));
  } else {
    store_result(out, out_dt, o, total.v);
  }
}

// Folds the per-split partials: one warp per output.
template <class A>
__global__ void __launch_bounds__(kThreads) sum_finish_kernel(Plan plan, const A* partial, char* out, DType out_dt, bool mean) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (o >= plan.outputs) return;
  A acc = 0;
  for (int64_t s = lane; s < plan.splits; s += 32) acc += partial[s * plan.outputs + o];
  acc = group_reduce<32>(SumValue<A>{acc}, [](SumValue<A> a, SumValue<A> b) { return SumValue<A>{a.v + b.v}; }, nullptr).v;
  if (lane != 0) return;
  if (mean) store_result(out, out_dt, o, static_cast<double>(acc) / static_cast<double>(plan.reduce_numel));
  else store_result(out, out_dt, o, acc);
}

Plan sum_plan(const ops::ReduceArgs& a, int sm_count) {
  const SumLayout l = layout_of(a);
  return make_plan(a.out_numel, a.reduce_numel, reduce_dim_is_fast(l), sm_count);
}

template <class T>
cudaError_t sum_typed(const ops::ReduceArgs& a, void* workspace, int sm_count, cudaStream_t stream) {
  using A = acc_t<T>;
  const SumLayout l = layout_of(a);
  const Plan plan = make_plan(a.out_numel, a.reduce_numel, reduce_dim_is_fast(l), sm_count);
  A* partial = plan.splits > 1 ? static_cast<A*>(workspace) : nullptr;
  const dim3 grid = grid_of(plan);
  const bool mean = a.op == ops::OpId::Mean;
  switch (plan.group) {
    case 1: sum_kernel<T, 1><<<grid, kThreads, 0, stream>>>(l, plan, a.in, a.out, a.out_dtype, mean, partial); break;
    case 32: sum_kernel<T, 32><<<grid, kThreads, 0, stream>>>(l, plan, a.in, a.out, a.out_dtype, mean, partial); break;
    default: sum_kernel<T, kThreads><<<grid, kThreads, 0, stream>>>(l, plan, a.in, a.out, a.out_dtype, mean, partial); break;
  }
  if (partial) {
    const auto blocks = static_cast<unsigned>((plan.outputs + kThreads / 32 - 1) / (kThreads / 32));
    sum_finish_kernel<A><<<blocks, kThreads, 0, stream>>>(plan, partial, a.out, a.out_dtype, mean);
  }
  return cudaGetLastError();
}

// ---- the other reductions of the op table: folds of their functors --------------------------

/// A fold's state as group_reduce moves it between threads (Note [Reduce functors]).
template <class F, class A>
struct Folded {
  ops::fn::State<A> s;
  __device__ Folded shuffled_down(int d) const { return {{shfl_down(s.a, d), shfl_down(s.b, d), shfl_down(s.n, d)}}; }
  /// The state of an empty part: combine ignores it.
  __device__ static Folded identity_like(const Folded&) { return {F::template init<A>()}; }
};

// The same plan and layout as sum_kernel, folding F instead of adding.
template <class F, class T, int G>
__global__ void __launch_bounds__(kThreads) fold_kernel(SumLayout l, Plan plan, const char* in, char* out, DType out_dt,
                                                        ops::fn::ReduceParams params, ops::fn::State<acc_t<T>>* partial) {
  using A = acc_t<T>;
  using V = Folded<F, A>;
  __shared__ V scratch[32];
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kThreads / G) + threadIdx.x / G;
  const int lane = threadIdx.x % G;
  const bool active = o < plan.outputs;
  V v{ops::fn::start<F, A>(params)};
  if (active) {
    const char* base = in + offset_in(o, l.nkept, l.kept_shape, l.kept_stride);
    const int64_t begin = blockIdx.y * plan.chunk;
    const int64_t end = std::min(begin + plan.chunk, plan.reduce_numel);
    for (int64_t r = begin + lane; r < end; r += G)
      F::step(v.s, static_cast<A>(load(reinterpret_cast<const T*>(base + offset_in(r, l.nred, l.red_shape, l.red_stride)))));
  }
  v = group_reduce<G>(v, [](V a, V b) { return V{F::combine(a.s, b.s)}; }, scratch);
  if (!active || lane != 0) return;
  if (partial) {
    partial[blockIdx.y * plan.outputs + o] = v.s;
    return;
  }
  store_result(out, out_dt, o, F::finish(v.s, params));
}

// Folds the per-split partial states: one warp per output.
template <class F, class A>
__global__ void __launch_bounds__(kThreads) fold_finish_kernel(Plan plan, const ops::fn::State<A>* partial, char* out,
                                                               DType out_dt, ops::fn::ReduceParams params) {
  using V = Folded<F, A>;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (o >= plan.outputs) return;
  V v{ops::fn::start<F, A>(params)};
  for (int64_t s = lane; s < plan.splits; s += 32) v.s = F::combine(v.s, partial[s * plan.outputs + o]);
  v = group_reduce<32>(v, [](V a, V b) { return V{F::combine(a.s, b.s)}; }, nullptr);
  if (lane != 0) return;
  store_result(out, out_dt, o, F::finish(v.s, params));
}

template <class F, class T>
cudaError_t fold_typed(const ops::ReduceArgs& a, void* workspace, int sm_count, cudaStream_t stream) {
  using A = acc_t<T>;
  const SumLayout l = layout_of(a);
  const Plan plan = make_plan(a.out_numel, a.reduce_numel, reduce_dim_is_fast(l), sm_count);
  auto* partial = plan.splits > 1 ? static_cast<ops::fn::State<A>*>(workspace) : nullptr;
  const dim3 grid = grid_of(plan);
  switch (plan.group) {
    case 1: fold_kernel<F, T, 1><<<grid, kThreads, 0, stream>>>(l, plan, a.in, a.out, a.out_dtype, a.params, partial); break;
    case 32: fold_kernel<F, T, 32><<<grid, kThreads, 0, stream>>>(l, plan, a.in, a.out, a.out_dtype, a.params, partial); break;
    default:
      fold_kernel<F, T, kThreads><<<grid, kThreads, 0, stream>>>(l, plan, a.in, a.out, a.out_dtype, a.params, partial);
      break;
  }
  if (partial) {
    const auto blocks = static_cast<unsigned>((plan.outputs + kThreads / 32 - 1) / (kThreads / 32));
    fold_finish_kernel<F, A><<<blocks, kThreads, 0, stream>>>(plan, partial, a.out, a.out_dtype, a.params);
  }
  return cudaGetLastError();
}

// An empty slice's result for every output: one thread per output, the functor's finish of its
// starting state (1 for prod, -inf for logsumexp, NaN for var, ...).
template <class F, class A>
__global__ void fold_empty_kernel(int64_t outputs, char* out, DType out_dt, ops::fn::ReduceParams params) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o < outputs) store_result(out, out_dt, o, F::finish(ops::fn::start<F, A>(params), params));
}

/// The fold of `F` for the input dtypes its rule lets reach a kernel, so nvcc compiles no
/// other instantiation.
template <class F, ops::ReduceRule kRule>
cudaError_t fold(const ops::ReduceArgs& a, void* workspace, int sm_count, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  if constexpr (std::is_same_v<F, ops::fn::Sum> || std::is_same_v<F, ops::fn::Mean>) {
    return err;  // sum_typed runs these two
  } else {
    LOCUS_CUDA_DISPATCH(a.in_dtype, {
      if constexpr (ops::reduce_kernel_takes(kRule, device_dtype<scalar_t>())) {
        if (a.reduce_numel == 0) {
          const auto blocks = static_cast<unsigned>((a.out_numel + kThreads - 1) / kThreads);
          fold_empty_kernel<F, acc_t<scalar_t>><<<blocks, kThreads, 0, stream>>>(a.out_numel, a.out, a.out_dtype, a.params);
          err = cudaGetLastError();
        } else {
          err = fold_typed<F, scalar_t>(a, workspace, sm_count, stream);
        }
      }
    });
    return err;
  }
}

/// Bytes of partial states a fold of `a` needs.
size_t fold_workspace_bytes(const ops::ReduceArgs& a, int sm_count) {
  if (a.out_numel == 0 || a.reduce_numel == 0) return 0;
  const Plan plan = sum_plan(a, sm_count);
  size_t item = 0;
  LOCUS_CUDA_DISPATCH(a.in_dtype, item = sizeof(ops::fn::State<acc_t<scalar_t>>));
  return plan.splits > 1 ? static_cast<size_t>(plan.splits * plan.outputs) * item : 0;
}

/// True for the reductions of the op table that run as folds (all but sum and mean).
bool is_fold(ops::OpId op) {
  switch (op) {
#define LOCUS_IS_FOLD(id, ...) case ops::OpId::id:
    LOCUS_REDUCE_OPS(LOCUS_IS_FOLD)
#undef LOCUS_IS_FOLD
    return op != ops::OpId::Sum && op != ops::OpId::Mean;
    default: return false;
  }
}

size_t acc_size(DType dt) {
  size_t n = 0;
  LOCUS_CUDA_DISPATCH(dt, n = sizeof(acc_t<scalar_t>));
  return n;
}

// The folds and sum/mean walk the input through SumLayout's kMaxDims slots: more dims (left
// after merging size-1 ones) are refused before any plan writes past them.
void require_layout_dims(const ops::ReduceArgs& a) {
  if (a.shape.size() > static_cast<size_t>(kMaxDims))
    throw NotImplementedError("[locus::" + std::string(ops::op_name(a.op)) + "] on cuda supports at most " +
                              std::to_string(kMaxDims) + " dims");
}

}  // namespace

size_t reduce_workspace_bytes(const ops::ReduceArgs& a, int sm_count) {
  if (is_fold(a.op) || a.op == ops::OpId::Sum || a.op == ops::OpId::Mean) require_layout_dims(a);
  if (is_fold(a.op)) return fold_workspace_bytes(a, sm_count);
  if (a.op == ops::OpId::Sum || a.op == ops::OpId::Mean) {
    if (a.out_numel == 0 || a.reduce_numel == 0) return 0;
    const Plan plan = sum_plan(a, sm_count);
    return plan.splits > 1 ? static_cast<size_t>(plan.splits * plan.outputs) * acc_size(a.in_dtype) : 0;
  }
  return extreme_workspace_bytes(a, sm_count);
}

cudaError_t launch_reduce(const ops::ReduceArgs& a, void* workspace, int sm_count, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  if (is_fold(a.op) || a.op == ops::OpId::Sum || a.op == ops::OpId::Mean) require_layout_dims(a);
  if (is_fold(a.op)) {
    if (a.out_numel == 0) return cudaSuccess;
    switch (a.op) {
#define LOCUS_FOLD_CASE(id, name, rule, ...) \
  case ops::OpId::id: return fold<ops::fn::id, ops::ReduceRule::rule>(a, workspace, sm_count, stream);
      LOCUS_REDUCE_OPS(LOCUS_FOLD_CASE)
#undef LOCUS_FOLD_CASE
      default: return cudaErrorInvalidValue;
    }
  }
  if (a.op == ops::OpId::Sum || a.op == ops::OpId::Mean) {
    if (a.out_numel == 0) return cudaSuccess;
    if (a.reduce_numel == 0) {  // an empty sum is 0 (a mean of nothing is NaN, as 0/0)
      LOCUS_CUDA_DISPATCH(a.out_dtype, {
        ops::StridedIter it;
        it.noperands = 1, it.numel = a.out_numel, it.shape = Shape{a.out_numel};
        it.strides[0] = Shape{static_cast<int64_t>(sizeof(scalar_t))};
        it.data[0] = a.out, it.dtypes[0] = a.out_dtype;
        err = launch_fill(it, a.op == ops::OpId::Mean ? Scalar(__builtin_nan("")) : Scalar(0), stream);
      });
      return err;
    }
    LOCUS_CUDA_DISPATCH(a.in_dtype, err = sum_typed<scalar_t>(a, workspace, sm_count, stream));
    return err;
  }
  return launch_extreme(a, workspace, sm_count, stream);
}

}  // namespace locus::cuda_backend
