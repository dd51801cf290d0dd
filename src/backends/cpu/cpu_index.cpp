// index_select and gather.

#include <cstring>
#include <string>

#include "locus/errors.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/parallel.h"
#include "src/core/public_op.h"

namespace locus::cpu {

void index_kernel(const ops::IndexArgs& a) {
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
