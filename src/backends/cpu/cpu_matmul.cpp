// Matrix products: OpenBLAS for float32/float64, oneDNN for bfloat16 where the build has it
// (cpu_dnnl_matmul.cpp), float16 (and bfloat16 otherwise) widened to float32 for OpenBLAS, and
// a plain loop for integer types, which BLAS does not cover.

#include <cblas.h>

#include <vector>

#include "src/backends/cpu/cpu_dnnl_matmul.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

// A BLAS operand: row-major with a transpose flag and leading dimension, or a packed copy when
// neither stride is 1.
template <class T>
struct BlasOperand {
  const T* ptr;
  CBLAS_TRANSPOSE trans;
  int64_t ld;
  std::vector<T> packed;
};

template <class T>
BlasOperand<T> blas_operand(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if (cs == 1 && (rs >= std::max<int64_t>(cols, 1) || rows == 1)) return {p, CblasNoTrans, std::max<int64_t>(rs, cols), {}};
  if (rs == 1 && (cs >= std::max<int64_t>(rows, 1) || cols == 1)) return {p, CblasTrans, std::max<int64_t>(cs, rows), {}};
  BlasOperand<T> op{nullptr, CblasNoTrans, std::max<int64_t>(cols, 1), std::vector<T>(static_cast<size_t>(rows * cols))};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) op.packed[r * cols + c] = p[r * rs + c * cs];
  op.ptr = op.packed.data();
  return op;
}

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const BlasOperand<T>& a, const BlasOperand<T>& b, T* c) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, a.trans, b.trans, m, n, k, 1.f, a.ptr, a.ld, b.ptr, b.ld, 0.f, c, std::max<int64_t>(n, 1));
  else
    cblas_dgemm(CblasRowMajor, a.trans, b.trans, m, n, k, 1.0, a.ptr, a.ld, b.ptr, b.ld, 0.0, c, std::max<int64_t>(n, 1));
}

template <class T>
void blas_matmul(const ops::MatmulArgs& g) {
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const T* a = reinterpret_cast<const T*>(g.a) + bi * g.a_batch_stride;
    const T* b = reinterpret_cast<const T*>(g.b) + bi * g.b_batch_stride;
    T* c = reinterpret_cast<T*>(g.c) + bi * g.c_batch_stride;
    if (g.k == 0) {
      std::fill(c, c + g.m * g.n, T(0));
      continue;
    }
    gemm<T>(g.m, g.n, g.k, blas_operand(a, g.m, g.k, g.a_row, g.a_col), blas_operand(b, g.k, g.n, g.b_row, g.b_col), c);
  }
}

// float16 / bfloat16: widen to float32, multiply with sgemm, round once on the way out.
template <class T>
void widened_matmul(const ops::MatmulArgs& g) {
  std::vector<float> a(static_cast<size_t>(g.m * g.k)), b(static_cast<size_t>(g.k * g.n)), c(static_cast<size_t>(g.m * g.n));
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const T* pa = reinterpret_cast<const T*>(g.a) + bi * g.a_batch_stride;
    const T* pb = reinterpret_cast<const T*>(g.b) + bi * g.b_batch_stride;
    for (int64_t r = 0; r < g.m; ++r)
      for (int64_t q = 0; q < g.k; ++q) a[r * g.k + q] = float(pa[r * g.a_row + q * g.a_col]);
    for (int64_t r = 0; r < g.k; ++r)
      for (int64_t q = 0; q < g.n; ++q) b[r * g.n + q] = float(pb[r * g.b_row + q * g.b_col]);
    ops::MatmulArgs f = g;
    f.batch = 1;
    f.a = reinterpret_cast<const char*>(a.data()), f.a_row = g.k, f.a_col = 1;
    f.b = reinterpret_cast<const char*>(b.data()), f.b_row = g.n, f.b_col = 1;
    f.c = reinterpret_cast<char*>(c.data());
    blas_matmul<float>(f);
    T* pc = reinterpret_cast<T*>(g.c) + bi * g.c_batch_stride;
    for (int64_t i = 0; i < g.m * g.n; ++i) pc[i] = T(c[i]);
  }
}

template <class T>
void integer_matmul(const ops::MatmulArgs& g) {
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const T* a = reinterpret_cast<const T*>(g.a) + bi * g.a_batch_stride;
    const T* b = reinterpret_cast<const T*>(g.b) + bi * g.b_batch_stride;
    T* c = reinterpret_cast<T*>(g.c) + bi * g.c_batch_stride;
    parallel_for(g.m, g.m * g.n * g.k >= (int64_t{1} << 18), [&](int64_t r0, int64_t r1) {
      std::vector<int64_t> row(static_cast<size_t>(g.n));
      for (int64_t r = r0; r < r1; ++r) {
        std::fill(row.begin(), row.end(), 0);
        for (int64_t q = 0; q < g.k; ++q) {
          const int64_t av = a[r * g.a_row + q * g.a_col];
          for (int64_t j = 0; j < g.n; ++j) row[j] += av * static_cast<int64_t>(b[q * g.b_row + j * g.b_col]);
        }
        for (int64_t j = 0; j < g.n; ++j) c[r * g.n + j] = static_cast<T>(row[j]);
      }
    }, 1);
  }
}

}  // namespace

void matmul_kernel(const ops::MatmulArgs& args) {
  switch (args.dtype) {
    case DType::Float32: return blas_matmul<float>(args);
    case DType::Float64: return blas_matmul<double>(args);
    case DType::Float16: return widened_matmul<Half>(args);
    case DType::BFloat16:
      if (args.k > 0 && dnnl_bf16_matmul(args)) return;
      return widened_matmul<BFloat16>(args);
    case DType::UInt8: return integer_matmul<uint8_t>(args);
    case DType::Int8: return integer_matmul<int8_t>(args);
    case DType::Int16: return integer_matmul<int16_t>(args);
    case DType::Int32: return integer_matmul<int32_t>(args);
    case DType::Int64: return integer_matmul<int64_t>(args);
    case DType::Bool: break;
  }
  throw DTypeError("internal: matmul kernel called with bool");
}

}  // namespace locus::cpu
