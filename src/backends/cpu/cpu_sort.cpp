// Sort and top-k along the last dim of a contiguous [rows, n] input (Note in SortArgs): rows in
// parallel, each sorted as (value, position) pairs so the order is total and the k < n result is
// the prefix of the full stable sort.

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

// NaN ranks above every number, as PyTorch's sort and topk.
template <class C>
bool less_nan_last(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <class T>
void sort_typed(const ops::SortArgs& a) {
  using C = compute_t<T>;
  const T* in = reinterpret_cast<const T*>(a.in);
  T* values = reinterpret_cast<T*>(a.values);
  const bool parallel = a.rows > 1 && a.rows * a.n * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.rows, parallel, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(static_cast<size_t>(a.n));
    for (int64_t r = begin; r < end; ++r) {
      const T* row = in + r * a.n;
      std::iota(order.begin(), order.end(), int64_t{0});
      // Ties by position: a total order, so partial_sort's prefix is the stable sort's.
      const auto before = [&](int64_t i, int64_t j) {
        const C x = C(row[i]), y = C(row[j]);
        if (a.descending ? less_nan_last(y, x) : less_nan_last(x, y)) return true;
        if (a.descending ? less_nan_last(x, y) : less_nan_last(y, x)) return false;
        return i < j;
      };
      if (a.k == a.n) std::sort(order.begin(), order.end(), before);
      else std::partial_sort(order.begin(), order.begin() + a.k, order.end(), before);
      for (int64_t j = 0; j < a.k; ++j) {
        values[r * a.k + j] = row[order[static_cast<size_t>(j)]];
        a.indices[r * a.k + j] = order[static_cast<size_t>(j)];
      }
    }
  }, 1);
}

template <class T>
void scan_typed(const ops::ScanArgs& a) {
  using A = std::conditional_t<is_float_v<T>, double, T>;  // as PyTorch's CPU accumulation type
  const T* in = reinterpret_cast<const T*>(a.in);
  T* out = reinterpret_cast<T*>(a.out);
  const bool prod = a.op == ops::OpId::Cumprod;
  const bool parallel = a.rows > 1 && a.rows * a.n * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.rows, parallel, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      A acc = prod ? A(1) : A(0);
      for (int64_t j = 0; j < a.n; ++j) {
        const A x = static_cast<A>(compute_t<T>(in[r * a.n + j]));
        acc = prod ? static_cast<A>(acc * x) : static_cast<A>(acc + x);
        out[r * a.n + j] = static_cast<T>(static_cast<compute_t<T>>(acc));
      }
    }
  }, 1);
}

}  // namespace

void sort_kernel(const ops::SortArgs& args) { LOCUS_DISPATCH_ALL(args.dtype, sort_typed<scalar_t>(args)); }

void scan_kernel(const ops::ScanArgs& args) {
  switch (args.dtype) {
    LOCUS_CASE(Int64, int64_t, scan_typed<scalar_t>(args))
    LOCUS_CASE(Float16, ::locus::Half, scan_typed<scalar_t>(args))
    LOCUS_CASE(BFloat16, ::locus::BFloat16, scan_typed<scalar_t>(args))
    LOCUS_CASE(Float32, float, scan_typed<scalar_t>(args))
    LOCUS_CASE(Float64, double, scan_typed<scalar_t>(args))
    default: throw DTypeError("internal: scan kernel called with dtype " + std::string(dtype_name(args.dtype)));
  }
}

}  // namespace locus::cpu
