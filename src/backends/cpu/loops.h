#pragma once
// The one strided loop driver every CPU elementwise kernel uses.

#include <cstdint>

#include "src/backends/cpu/parallel.h"
#include "src/ops/kernel_table.h"

namespace locus::cpu {

/// Calls row(ptrs, strides, n) over runs of the innermost dim: `ptrs` point at the run's first
/// element of each operand, `strides` are the operands' innermost byte strides, `n` the run
/// length. Splits the element range over threads when the work is large.
template <int N, class Row>
void for_each_run(const ops::StridedIter& it, int64_t bytes_per_element, Row&& row) {
  const int nd = static_cast<int>(it.shape.size());
  if (it.numel == 0) return;
  if (nd == 0) {
    char* ptrs[N];
    int64_t st[N];
    for (int k = 0; k < N; ++k) ptrs[k] = it.data[k], st[k] = 0;
    row(ptrs, st, int64_t{1});
    return;
  }
  const int64_t inner = it.shape[nd - 1];
  int64_t inner_strides[N];
  for (int k = 0; k < N; ++k) inner_strides[k] = it.strides[k][nd - 1];
  const bool parallel = it.numel * bytes_per_element >= kParallelBytes;
  if (nd == 1 && !parallel) {  // one run on this thread: no index walk (the per-op fast path)
    char* ptrs[N];
    for (int k = 0; k < N; ++k) ptrs[k] = it.data[k];
    row(ptrs, inner_strides, inner);
    return;
  }
  parallel_for(it.numel, parallel, [&](int64_t begin, int64_t end) {
    int64_t idx[64];
    int64_t rem = begin / inner;
    for (int d = nd - 2; d >= 0; --d) {
      idx[d] = rem % it.shape[d];
      rem /= it.shape[d];
    }
    int64_t pos = begin % inner;
    int64_t e = begin;
    while (e < end) {
      char* ptrs[N];
      for (int k = 0; k < N; ++k) {
        char* p = it.data[k] + pos * inner_strides[k];
        for (int d = 0; d < nd - 1; ++d) p += idx[d] * it.strides[k][d];
        ptrs[k] = p;
      }
      const int64_t n = std::min(inner - pos, end - e);
      row(ptrs, inner_strides, n);
      e += n;
      pos = 0;
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < it.shape[d]) break;
        idx[d] = 0;
      }
    }
  });
}

}  // namespace locus::cpu
