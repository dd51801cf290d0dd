// index_select and gather, and the scatters (scatter, scatter_add, index_add).

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>

#include "locus/errors.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"
#include "src/core/public_op.h"

namespace locus::cpu {

namespace {

// Note [Deterministic scatters]: out[o, :, i] is written only from in[o, :, i], and one thread
// owns each (o, i): repeated indices then add up (or, for Scatter, the last one wins) in the same
// order on every run and with any thread count, which atomics or a split over j would not give.
// The threads take blocks of consecutive i of one o (all of them up to 2048, else 1024 at a
// time) and walk j in order over the block, so each step reads and writes a contiguous run: a
// thread per single (o, i) would stride through memory and reread every cache line `inner`
// times, and narrower blocks make each thread stride over rows it only partly uses (measured:
// scatter_add of 65536 rows of 64 into 4096 took 21 ms in blocks of 16 on 2 threads, 5.8 ms in
// whole rows on 1).
// An out-of-range index is skipped and reported afterwards: `out` is the op's fresh result (its
// caller copies it into self only on success), so nothing the user holds has changed.
template <class T>
bool scatter_blocks(const ops::IndexArgs& a) {
  const auto* in = reinterpret_cast<const T*>(a.in);
  auto* out = reinterpret_cast<T*>(a.out);
  const bool add = a.op != ops::OpId::Scatter;
  const bool per_element = a.op != ops::OpId::IndexAdd;
  const int64_t inner = a.inner;
  const int64_t width = inner <= 2048 ? inner : 1024;
  const int64_t blocks_per_o = (inner + width - 1) / width;
  const int64_t blocks = a.outer * blocks_per_o;
  const bool parallel = blocks > 1 && a.outer * a.in_dim * inner * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  const auto apply = [add](T& dst, T src) {
    if (!add) dst = src;
    else if constexpr (std::is_same_v<T, bool>) dst = dst || src;
    else dst = static_cast<T>(static_cast<compute_t<T>>(dst) + static_cast<compute_t<T>>(src));
  };
  std::atomic<bool> in_range{true};
  parallel_for(blocks, parallel, [&](int64_t b, int64_t e) {
    bool ok = true;
    for (int64_t blk = b; blk < e; ++blk) {
      const int64_t o = blk / blocks_per_o, i0 = (blk % blocks_per_o) * width, i1 = std::min(inner, i0 + width);
      if (per_element && inner == 1) {  // a 1-D scatter: one tight loop, not a loop of one-element runs
        const T* src = in + o * a.in_dim;
        const int64_t* index = a.index + o * a.in_dim;
        T* dst = out + o * a.out_dim;
        for (int64_t j = 0; j < a.in_dim; ++j) {
          const int64_t k = index[j];
          if (k < 0 || k >= a.out_dim) {
            ok = false;
            continue;
          }
          apply(dst[k], src[j]);
        }
        continue;
      }
      for (int64_t j = 0; j < a.in_dim; ++j) {
        const int64_t line = (o * a.in_dim + j) * inner;
        const T* src = in + line;
        if (per_element) {
          const int64_t* index = a.index + line;
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t k = index[i];
            if (k < 0 || k >= a.out_dim) {
              ok = false;
              continue;
            }
            apply(out[(o * a.out_dim + k) * inner + i], src[i]);
          }
        } else {
          const int64_t k = a.index[j];
          if (k < 0 || k >= a.out_dim) {
            ok = false;
            continue;
          }
          T* dst = out + (o * a.out_dim + k) * inner;
          for (int64_t i = i0; i < i1; ++i) apply(dst[i], src[i]);
        }
      }
    }
    if (!ok) in_range.store(false, std::memory_order_relaxed);
  }, 1);
  return in_range.load();
}

void scatter_kernel(const ops::IndexArgs& a) {
  bool in_range = true;
  LOCUS_DISPATCH_ALL(a.dtype, in_range = scatter_blocks<scalar_t>(a));
  if (in_range) return;
  // The first index out of range, in the index's order, named as PyTorch names it.
  const int64_t n_index = a.op == ops::OpId::IndexAdd ? a.in_dim : a.outer * a.in_dim * a.inner;
  for (int64_t i = 0; i < n_index; ++i) {
    const int64_t v = a.index[i];
    if (v < 0 || v >= a.out_dim) {
      if (a.op == ops::OpId::IndexAdd)  // PyTorch's index_add words it as index_select does
        throw IndexError(detail::error_prefix(ops::op_name(a.op)) + "index out of range in self (index " + std::to_string(v) +
                         ", dimension " + std::to_string(a.dim) + " with size " + std::to_string(a.out_dim) + ")");
      throw IndexError(detail::error_prefix(ops::op_name(a.op)) + "index " + std::to_string(v) + " is out of bounds for dimension " +
                       std::to_string(a.dim) + " with size " + std::to_string(a.out_dim));
    }
  }
}

}  // namespace

void index_kernel(const ops::IndexArgs& a) {
  if (a.op == ops::OpId::Scatter || a.op == ops::OpId::ScatterAdd || a.op == ops::OpId::IndexAdd) return scatter_kernel(a);
  const size_t item = itemsize(a.dtype);
  const int64_t n_index = a.op == ops::OpId::IndexSelect ? a.out_dim : a.outer * a.out_dim * a.inner;
  // Validate every index before writing anything, so a bad index leaves `out` untouched.
  for (int64_t i = 0; i < n_index; ++i) {
    const int64_t v = a.index[i];
    if (v < 0 || v >= a.in_dim)  // negative indices are errors, as in PyTorch
      throw IndexError(detail::error_prefix(ops::op_name(a.op)) + "index " + std::to_string(v) +
                       " is out of bounds for dimension of size " + std::to_string(a.in_dim));
  }
  const bool parallel = a.outer * a.out_dim * a.inner * static_cast<int64_t>(item) >= kParallelBytes;
  if (a.op == ops::OpId::IndexSelect) {
    parallel_for(a.outer * a.out_dim, parallel, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t o = r / a.out_dim, j = r % a.out_dim;
        std::memcpy(a.out + (r * a.inner) * item, a.in + ((o * a.in_dim + a.index[j]) * a.inner) * item,
                    static_cast<size_t>(a.inner) * item);
      }
    }, 1);
    return;
  }
  parallel_for(a.outer * a.out_dim * a.inner, parallel, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r % a.inner, o = r / (a.out_dim * a.inner);
      std::memcpy(a.out + r * item, a.in + ((o * a.in_dim + a.index[r]) * a.inner + i) * item, item);
    }
  });
}

}  // namespace locus::cpu
