// index_select and gather, and the scatters (scatter, scatter_add, index_add).

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

// Note [Deterministic scatters]: out[o, :, i] is written only from in[o, :, i], so the (o, i)
// lines are split among threads and each walks j in order. Repeated indices then add up (or,
// for Scatter, the last one wins) in the same order on every run and with any thread count,
// which atomics or a split over j would not give.
template <class T>
void scatter_lines(const ops::IndexArgs& a) {
  const auto* in = reinterpret_cast<const T*>(a.in);
  auto* out = reinterpret_cast<T*>(a.out);
  const bool add = a.op != ops::OpId::Scatter;
  const bool per_element = a.op != ops::OpId::IndexAdd;
  const int64_t lines = a.outer * a.inner;
  const bool parallel = lines * a.in_dim * static_cast<int64_t>(sizeof(T)) >= kParallelBytes && lines > 1;
  parallel_for(lines, parallel, [&](int64_t b, int64_t e) {
    for (int64_t l = b; l < e; ++l) {
      const int64_t o = l / a.inner, i = l % a.inner;
      for (int64_t j = 0; j < a.in_dim; ++j) {
        const int64_t src = (o * a.in_dim + j) * a.inner + i;
        const int64_t k = per_element ? a.index[src] : a.index[j];
        T& dst = out[(o * a.out_dim + k) * a.inner + i];
        if (!add) {
          dst = in[src];
        } else if constexpr (std::is_same_v<T, bool>) {
          dst = dst || in[src];
        } else {
          dst = static_cast<T>(static_cast<compute_t<T>>(dst) + static_cast<compute_t<T>>(in[src]));
        }
      }
    }
  });
}

void scatter_kernel(const ops::IndexArgs& a) {
  const int64_t n_index = a.op == ops::OpId::IndexAdd ? a.in_dim : a.outer * a.in_dim * a.inner;
  // Every index is checked before anything is written, so a bad one leaves `out` as it was.
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
  LOCUS_DISPATCH_ALL(a.dtype, scatter_lines<scalar_t>(a));
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
