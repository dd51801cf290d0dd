#pragma once
// What the CUDA reductions share (Note [CUDA reductions] in cuda_reduce.cu): the plan that says
// which threads fold which outputs, and the entry points of max, min, argmax and argmin
// (cuda_reduce_extreme.cu), which cuda_reduce.cu's launch_reduce calls.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "src/ops/kernel_table.h"

namespace locus::cuda_backend {

/// Threads per block of every reduction kernel.
constexpr int kThreads = 256;

/// Which threads fold what: outputs are `outputs` (row-major over the kept dims), each the fold
/// of `reduce_numel` elements, split into `splits` chunks.
struct Plan {
  int group = 1;
  int64_t outputs = 1, reduce_numel = 1, splits = 1, chunk = 1;
};

/// The plan for `outputs` folds of `reduce_numel` elements each on `sm_count` SMs: a group of 1
/// thread per output unless the reduced elements are the fast dim, and splits until the GPU is full.
inline Plan make_plan(int64_t outputs, int64_t reduce_numel, bool reduce_dim_is_fast, int sm_count) {
  Plan p;
  p.outputs = outputs;
  p.reduce_numel = reduce_numel;
  p.group = !reduce_dim_is_fast ? 1 : reduce_numel >= 2048 ? kThreads : 32;
  const int64_t target_threads = int64_t{std::max(sm_count, 1)} * 2048;
  const int64_t threads = outputs * p.group;
  const int64_t max_splits = std::max<int64_t>(1, reduce_numel / (int64_t{p.group} * 32));
  p.splits = std::clamp<int64_t>(target_threads / std::max<int64_t>(threads, 1), 1, std::min<int64_t>(max_splits, 1024));
  p.chunk = (reduce_numel + p.splits - 1) / p.splits;
  p.splits = std::max<int64_t>(1, (reduce_numel + p.chunk - 1) / p.chunk);
  return p;
}

/// The grid of `p`: outputs across blockIdx.x, splits across blockIdx.y.
inline dim3 grid_of(const Plan& p) {
  const int64_t per_block = kThreads / p.group;
  return dim3(static_cast<unsigned>((p.outputs + per_block - 1) / per_block), static_cast<unsigned>(p.splits));
}


/// Bytes of scratch launch_extreme needs for `a` (Max, Min, Argmax or Argmin).
size_t extreme_workspace_bytes(const ops::ReduceArgs& a, int sm_count);

/// Max, min, argmax or argmin along the middle dim of `a`'s contiguous [outer, dim, inner] input.
cudaError_t launch_extreme(const ops::ReduceArgs& a, void* workspace, int sm_count, cudaStream_t stream);

}  // namespace locus::cuda_backend
