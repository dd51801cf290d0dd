// Matrix products: oneDNN for bfloat16, and for float32 on CPUs where it beats OpenBLAS, where
// the build has it (cpu_dnnl_matmul.cpp); OpenBLAS for float32/float64 otherwise; float16 (and
// bfloat16 without oneDNN) widened to float32 for OpenBLAS; a plain loop for integer types,
// which BLAS does not cover. Linear's form (KernelTable::linear) adds a bias and an activation:
// oneDNN as post-ops, OpenBLAS by starting C at the bias (beta = 1) and one pass after.

#include <cblas.h>

#include <vector>

#include "src/backends/cpu/cpu_dnnl_matmul.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"
#include "src/ops/functors.h"

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

// Entry i of a batch of operands: base plus i strides. An empty operand may have no storage
// (null), and offsetting a null pointer is undefined, so it stays null: nothing reads it.
template <class T>
T* batch_entry(T* base, int64_t i, int64_t stride) {
  return base ? base + i * stride : base;
}

// C = alpha A B + beta C (BLAS does not read C when beta is 0).
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const BlasOperand<T>& a, const BlasOperand<T>& b, T alpha, T beta, T* c) {
  threads_now();  // OpenBLAS sizes its team from this thread's OpenMP setting (Note [Thread budget])
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, a.trans, b.trans, m, n, k, alpha, a.ptr, a.ld, b.ptr, b.ld, beta, c, std::max<int64_t>(n, 1));
  else
    cblas_dgemm(CblasRowMajor, a.trans, b.trans, m, n, k, alpha, a.ptr, a.ld, b.ptr, b.ld, beta, c, std::max<int64_t>(n, 1));
}

// C = alpha A B + beta C (Note [Product scaling]), or A B plus the bias in every row when
// g.bias is set (C starts as the bias, beta = 1: one write of C instead of a second pass).
template <class T>
void blas_matmul(const ops::MatmulArgs& g) {
  const T* bias = reinterpret_cast<const T*>(g.bias);
  const T alpha = static_cast<T>(g.alpha), beta = bias ? T(1) : static_cast<T>(g.beta);
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const T* a = batch_entry(reinterpret_cast<const T*>(g.a), bi, g.a_batch_stride);
    const T* b = batch_entry(reinterpret_cast<const T*>(g.b), bi, g.b_batch_stride);
    T* c = batch_entry(reinterpret_cast<T*>(g.c), bi, g.c_batch_stride);
    if (bias) {
      for (int64_t r = 0; r < g.m; ++r) std::copy(bias, bias + g.n, c + r * g.n);
    } else if (g.k == 0) {  // an empty sum: beta C, and never a read of C when beta is 0
      if (beta == T(0)) std::fill(c, c + g.m * g.n, T(0));
      else for (int64_t i = 0; i < g.m * g.n; ++i) c[i] *= beta;
    }
    if (g.k == 0) continue;
    gemm<T>(g.m, g.n, g.k, blas_operand(a, g.m, g.k, g.a_row, g.a_col), blas_operand(b, g.k, g.n, g.b_row, g.b_col),
            alpha, beta, c);
  }
}

// float16 / bfloat16: widen to float32, multiply with sgemm (alpha and beta included, C widened
// too when beta reads it), round once on the way out.
template <class T>
void widened_matmul(const ops::MatmulArgs& g) {
  std::vector<float> a(static_cast<size_t>(g.m * g.k)), b(static_cast<size_t>(g.k * g.n)), c(static_cast<size_t>(g.m * g.n));
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const T* pa = batch_entry(reinterpret_cast<const T*>(g.a), bi, g.a_batch_stride);
    const T* pb = batch_entry(reinterpret_cast<const T*>(g.b), bi, g.b_batch_stride);
    for (int64_t r = 0; r < g.m; ++r)
      for (int64_t q = 0; q < g.k; ++q) a[r * g.k + q] = float(pa[r * g.a_row + q * g.a_col]);
    for (int64_t r = 0; r < g.k; ++r)
      for (int64_t q = 0; q < g.n; ++q) b[r * g.n + q] = float(pb[r * g.b_row + q * g.b_col]);
    ops::MatmulArgs f = g;
    f.batch = 1;
    f.bias = nullptr, f.epilogue = ops::Epilogue::None;
    f.a = reinterpret_cast<const char*>(a.data()), f.a_row = g.k, f.a_col = 1;
    f.b = reinterpret_cast<const char*>(b.data()), f.b_row = g.n, f.b_col = 1;
    f.c = reinterpret_cast<char*>(c.data());
    T* pc = batch_entry(reinterpret_cast<T*>(g.c), bi, g.c_batch_stride);
    if (g.beta != 0)
      for (int64_t i = 0; i < g.m * g.n; ++i) c[i] = float(pc[i]);
    blas_matmul<float>(f);
    for (int64_t i = 0; i < g.m * g.n; ++i) pc[i] = T(c[i]);
  }
}

template <class T>
void integer_matmul(const ops::MatmulArgs& g) {
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const T* a = batch_entry(reinterpret_cast<const T*>(g.a), bi, g.a_batch_stride);
    const T* b = batch_entry(reinterpret_cast<const T*>(g.b), bi, g.b_batch_stride);
    T* c = batch_entry(reinterpret_cast<T*>(g.c), bi, g.c_batch_stride);
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

// The product without bias or epilogue (oneDNN paths take both themselves).
void product(const ops::MatmulArgs& args) {
  switch (args.dtype) {
    case DType::Float32:
      if (dnnl_preferred_for_float32() && dnnl_matmul(args)) return;
      return blas_matmul<float>(args);
    case DType::Float64: return blas_matmul<double>(args);
    case DType::Float16: return widened_matmul<Half>(args);
    case DType::BFloat16:
      if (dnnl_matmul(args)) return;
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

// The bias (16-bit floats: BLAS took none) and the activation of a product already in C.
template <class T>
void finish_linear(const ops::MatmulArgs& g, bool add_bias) {
  using C = compute_t<T>;
  T* c = reinterpret_cast<T*>(g.c);
  const T* bias = reinterpret_cast<const T*>(g.bias);
  const int64_t rows = g.batch * g.m;
  parallel_for(rows, rows * g.n * static_cast<int64_t>(sizeof(T)) * 2 >= kParallelBytes, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* row = c + r * g.n;
      for (int64_t j = 0; j < g.n; ++j) {
        C v = static_cast<C>(row[j]);
        if (add_bias) v = static_cast<C>(T(v + static_cast<C>(bias[j])));  // rounded as the composed add
        if (g.epilogue == ops::Epilogue::Relu) v = v < C(0) ? C(0) : v;
        else if (g.epilogue == ops::Epilogue::Gelu) v = ops::fn::Gelu{}(v, ops::fn::Params<C>{});
        row[j] = static_cast<T>(v);
      }
    }
  }, 1);
}

}  // namespace

void matmul_kernel(const ops::MatmulArgs& args) {
  ops::MatmulArgs plain = args;
  plain.bias = nullptr, plain.epilogue = ops::Epilogue::None;
  product(plain);
}

void linear_kernel(const ops::MatmulArgs& args) {
  if ((args.dtype == DType::BFloat16 || dnnl_preferred_for_float32()) && dnnl_matmul(args)) return;
  const bool blas_bias = args.dtype == DType::Float32 || args.dtype == DType::Float64;
  ops::MatmulArgs first = args;
  first.epilogue = ops::Epilogue::None;
  if (!blas_bias) first.bias = nullptr;
  if (blas_bias) {
    if (args.dtype == DType::Float32) blas_matmul<float>(first);
    else blas_matmul<double>(first);
  } else {
    product(first);
  }
  const bool add_bias = args.bias && !blas_bias;
  if (!add_bias && args.epilogue == ops::Epilogue::None) return;
  LOCUS_DISPATCH_FLOATING(args.dtype, finish_linear<scalar_t>(args, add_bias));
}

}  // namespace locus::cpu
