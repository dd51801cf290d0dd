// Fused scaled dot-product attention on the CPU (AttentionArgs).
//
// Note [Fused attention]
// The forward is a tiled online softmax (FlashAttention's recurrence): each task takes kRows
// query rows of one batch-head and walks the keys kCols at a time, keeping per row the running
// maximum m and sum l of exp(score - m) and the output accumulated with the same weights,
// rescaled by exp(m_old - m_new) when the maximum grows; at the end out = acc / l and the row's
// log-sum-exp m + log l is kept. The backward recomputes each tile's weights from that
// log-sum-exp instead of storing them, so neither pass holds more than one [kRows, kCols] tile
// of scores per thread: memory is linear in the lengths. It runs one batch-head per thread, so
// the gradients of k and v need no reduction across threads and repeat bit for bit. Key tiles
// entirely above the diagonal are skipped under is_causal. Tiles are products of oneDNN's
// brgemm matmul where it is preferred and the tile is large enough (gemm() below), else of
// OpenBLAS; both are called inside the OpenMP region, where they run single-threaded. The
// exponentials and maxima are vec_math.h's, eight lanes at a time.

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "src/backends/cpu/cpu_dnnl_matmul.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/parallel.h"
#include "src/backends/cpu/vec_math.h"
#include "src/ops/philox.h"

namespace locus::cpu {
namespace {

using Args = ops::AttentionArgs;

// Query rows per tile, and keys per tile.
constexpr int64_t kRows = 64;
constexpr int64_t kCols = 256;

// The multiply-adds from which a tile's product goes to oneDNN: below, a call's fixed cost (its
// memory objects and argument map, a few microseconds) outweighs the faster kernel, as in the
// char-LM's 35-token attention, whose step was 5% slower with every tile on oneDNN.
constexpr int64_t kDnnlTileWork = int64_t{1} << 17;

// C[m, n] = alpha op(A) op(B) + beta C, row-major. Large float32 tiles go to oneDNN's AVX-512
// matmul where it is preferred (OpenBLAS 0.3.21 runs its AVX2 kernel on these cores, and the
// tiles' products were 78% of a 1024-token forward): beta 0 or 1 directly, alpha as a scaling
// of the fresh tile after it (BLAS applies alpha to the finished sums too). The rest is BLAS's.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m * n * k >= kDnnlTileWork && dnnl_preferred_for_float32() && (alpha == 1 || beta == 0) &&
      dnnl_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)) {
    if (alpha != 1)
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) c[r * ldc + j] *= alpha;
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda, const double* b,
          int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
}

// The row's largest element (at least `init`).
template <class T>
T row_max(const T* x, int64_t n, T init) {
  T top = init;
  int64_t i = 0;
#if LOCUS_CPU_AVX2
  if constexpr (std::is_same_v<T, float>) {
    __m256 lanes = _mm256_set1_ps(init);
    for (; i < whole_vectors_end(n, 8); i += 8) lanes = _mm256_max_ps(lanes, _mm256_loadu_ps(x + i));
    alignas(32) float out[8];
    _mm256_store_ps(out, lanes);
    for (float v : out) top = std::max(top, v);
  }
#endif
  for (; i < n; ++i) top = std::max(top, x[i]);
  return top;
}

// x[i] = exp(x[i] - shift) over the row; returns their sum.
template <class T>
T exp_row(T* x, int64_t n, T shift) {
  T total = 0;
  int64_t i = 0;
#if LOCUS_CPU_AVX2
  if constexpr (std::is_same_v<T, float>) {
    __m256 sum = _mm256_setzero_ps();
    const __m256 s = _mm256_set1_ps(shift);
    for (; i < whole_vectors_end(n, 8); i += 8) {
      const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
      _mm256_storeu_ps(x + i, e);
      sum = _mm256_add_ps(sum, e);
    }
    alignas(32) float out[8];
    _mm256_store_ps(out, sum);
    for (float v : out) total += v;
  }
#endif
  for (; i < n; ++i) total += x[i] = exp_of(x[i] - shift);
  return total;
}

// Dropout's keep factors for keys [j0, j0 + cols) of row i of batch b: weight (b, i, j) is kept
// when word (b L + i) S + j of the Philox stream, as a uniform in [0, 1), is at least p. Each
// Philox call gives four consecutive words.
template <class T>
void keep_factors(const Args& a, int64_t b, int64_t i, int64_t j0, int64_t cols, T keep_scale, T* out) {
  uint64_t index = (static_cast<uint64_t>(b) * static_cast<uint64_t>(a.length) + static_cast<uint64_t>(i)) *
                       static_cast<uint64_t>(a.keys) +
                   static_cast<uint64_t>(j0);
  const uint64_t end = index + static_cast<uint64_t>(cols);
  for (T* o = out; index < end;) {
    const runtime::Philox4 r = runtime::philox4x32(a.seed, a.offset + index / 4);
    for (int w = static_cast<int>(index % 4); w < 4 && index < end; ++w, ++index)
      *o++ = static_cast<double>(r[w]) * 0x1.0p-32 >= a.dropout_p ? keep_scale : T(0);
  }
}

// The scores of one tile: rows [i0, i0 + rows) against keys [j0, j0 + cols) of batch b, scaled,
// masked and written to s (leading dimension kCols).
template <class T>
void tile_scores(const Args& a, int64_t b, int64_t i0, int64_t rows, int64_t j0, int64_t cols, T* s) {
  const T* q = reinterpret_cast<const T*>(a.q) + (b * a.length + i0) * a.features;
  const T* k = reinterpret_cast<const T*>(a.k) + (b * a.keys + j0) * a.features;
  gemm(false, true, rows, cols, a.features, static_cast<T>(a.scale), q, a.features, k, a.features, T(0), s, kCols);
  if (a.mask) {
    const T* mask = reinterpret_cast<const T*>(a.mask) + a.mask_offsets[b];
    for (int64_t r = 0; r < rows; ++r) {
      const T* m = mask + (i0 + r) * a.mask_row_stride + j0 * a.mask_col_stride;
      T* row = s + r * kCols;
      for (int64_t c = 0; c < cols; ++c) row[c] += m[c * a.mask_col_stride];
    }
  }
  if (a.causal)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < cols; ++c) s[r * kCols + c] = -std::numeric_limits<T>::infinity();
}

// The keys a query tile sees: all, or with causal those up to its last row (top-left aligned).
int64_t key_end(const Args& a, int64_t i0, int64_t rows) {
  return a.causal ? std::min(a.keys, i0 + rows) : a.keys;
}

// One query tile of the forward: the online softmax over key tiles, then out = acc / l and
// lse = m + log l. A row whose keys are all masked gets NaN (as the composition's softmax).
template <class T>
void forward_tile(const Args& a, int64_t b, int64_t i0, int64_t rows, std::vector<T>& scratch) {
  const int64_t ev = a.value_features;
  scratch.resize(static_cast<size_t>(kRows * kCols + kRows * ev + 2 * kRows));
  T* s = scratch.data();
  T* acc = s + kRows * kCols;
  T* m = acc + kRows * ev;
  T* l = m + kRows;
  std::fill(acc, acc + rows * ev, T(0));
  std::fill(m, m + rows, -std::numeric_limits<T>::infinity());
  std::fill(l, l + rows, T(0));
  const T keep_scale = a.dropout_p > 0 ? static_cast<T>(1.0 / (1.0 - a.dropout_p)) : T(1);
  const int64_t end = key_end(a, i0, rows);
  for (int64_t j0 = 0; j0 < end; j0 += kCols) {
    const int64_t cols = std::min(kCols, end - j0);
    tile_scores(a, b, i0, rows, j0, cols, s);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = s + r * kCols;
      const T top = row_max(row, cols, m[r]);
      if (top == -std::numeric_limits<T>::infinity()) {  // every key so far masked
        std::fill(row, row + cols, T(0));
        continue;
      }
      const T alpha = exp_of(m[r] - top);
      l[r] = l[r] * alpha + exp_row(row, cols, top);
      m[r] = top;
      if (alpha != T(1))
        for (int64_t e = 0; e < ev; ++e) acc[r * ev + e] *= alpha;
      if (a.dropout_p > 0) {
        T factors[kCols];
        keep_factors(a, b, i0 + r, j0, cols, keep_scale, factors);
        for (int64_t c = 0; c < cols; ++c) row[c] *= factors[c];
      }
    }
    const T* v = reinterpret_cast<const T*>(a.v) + (b * a.keys + j0) * ev;
    gemm(false, false, rows, ev, cols, T(1), s, kCols, v, ev, T(1), acc, ev);
  }
  T* out = reinterpret_cast<T*>(a.out) + (b * a.length + i0) * ev;
  T* lse = reinterpret_cast<T*>(a.lse) + b * a.length + i0;
  for (int64_t r = 0; r < rows; ++r) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const T inv = l[r] > 0 ? T(1) / l[r] : nan;
    for (int64_t e = 0; e < ev; ++e) out[r * ev + e] = acc[r * ev + e] * inv;
    lse[r] = l[r] > 0 ? m[r] + std::log(l[r]) : nan;
  }
}

template <class T>
void forward(const Args& a) {
  const int64_t tiles = (a.length + kRows - 1) / kRows, tasks = a.batch * tiles;
  const int64_t work = a.batch * a.length * a.keys * (a.features + a.value_features) * static_cast<int64_t>(sizeof(T));
  parallel_for(tasks, work >= kParallelBytes, [&](int64_t begin, int64_t end) {
    std::vector<T> scratch;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / tiles, i0 = (t % tiles) * kRows;
      forward_tile<T>(a, b, i0, std::min(kRows, a.length - i0), scratch);
    }
  }, 1);
}

// The backward of batch b, on one thread (its grad_q, grad_k and grad_v are its own): for each
// query tile and key tile, the weights P = exp(scores - lse) again, then
//   grad_v += (P Z)^T grad_out,   dP = (grad_out v^T) Z,   dS = P (dP - D),
//   grad_q += scale dS k,   grad_k += scale dS^T q,
// with Z the dropout's kept / (1 - p) and D = rowsum(grad_out * out).
template <class T>
void backward_batch(const Args& a, int64_t b, std::vector<T>& scratch) {
  const int64_t e = a.features, ev = a.value_features;
  scratch.resize(static_cast<size_t>(3 * kRows * kCols + a.length));
  T* p = scratch.data();
  T* dp = p + kRows * kCols;
  T* pz = dp + kRows * kCols;
  T* d = pz + kRows * kCols;
  const T* out = reinterpret_cast<const T*>(a.out) + b * a.length * ev;
  const T* go = reinterpret_cast<const T*>(a.grad_out) + b * a.length * ev;
  const T* lse = reinterpret_cast<const T*>(a.lse) + b * a.length;
  const T* q = reinterpret_cast<const T*>(a.q) + b * a.length * e;
  const T* k = reinterpret_cast<const T*>(a.k) + b * a.keys * e;
  const T* v = reinterpret_cast<const T*>(a.v) + b * a.keys * ev;
  T* gq = reinterpret_cast<T*>(a.grad_q) + b * a.length * e;
  T* gk = reinterpret_cast<T*>(a.grad_k) + b * a.keys * e;
  T* gv = reinterpret_cast<T*>(a.grad_v) + b * a.keys * ev;
  std::fill(gq, gq + a.length * e, T(0));
  std::fill(gk, gk + a.keys * e, T(0));
  std::fill(gv, gv + a.keys * ev, T(0));
  for (int64_t i = 0; i < a.length; ++i) {
    T total = 0;
    for (int64_t c = 0; c < ev; ++c) total += go[i * ev + c] * out[i * ev + c];
    d[i] = total;
  }
  const T scale = static_cast<T>(a.scale);
  const T keep_scale = a.dropout_p > 0 ? static_cast<T>(1.0 / (1.0 - a.dropout_p)) : T(1);
  for (int64_t i0 = 0; i0 < a.length; i0 += kRows) {
    const int64_t rows = std::min(kRows, a.length - i0), end = key_end(a, i0, rows);
    for (int64_t j0 = 0; j0 < end; j0 += kCols) {
      const int64_t cols = std::min(kCols, end - j0);
      tile_scores(a, b, i0, rows, j0, cols, p);
      for (int64_t r = 0; r < rows; ++r) {
        T* row = p + r * kCols;
        exp_row(row, cols, lse[i0 + r]);
      }
      const T* weights = p;
      if (a.dropout_p > 0) {
        for (int64_t r = 0; r < rows; ++r) {
          T* z = pz + r * kCols;
          keep_factors(a, b, i0 + r, j0, cols, keep_scale, z);
          for (int64_t c = 0; c < cols; ++c) z[c] *= p[r * kCols + c];
        }
        weights = pz;
      }
      gemm(true, false, cols, ev, rows, T(1), weights, kCols, go + i0 * ev, ev, T(1), gv + j0 * ev, ev);
      gemm(false, true, rows, cols, ev, T(1), go + i0 * ev, ev, v + j0 * ev, ev, T(0), dp, kCols);
      for (int64_t r = 0; r < rows; ++r) {
        T* dp_row = dp + r * kCols;
        const T* p_row = p + r * kCols;
        const T* z_row = pz + r * kCols;
        const T di = d[i0 + r];
        // The scores' gradient times the softmax scale, once here rather than in both products
        // below (whose accumulating calls then take oneDNN's kernel).
        if (a.dropout_p > 0) {
          // dP through the mask: Z dP, where pz = P Z (so Z = pz / P where P > 0; zero where dropped).
          for (int64_t c = 0; c < cols; ++c)
            dp_row[c] = scale * (p_row[c] * ((z_row[c] != T(0) ? dp_row[c] * keep_scale : T(0)) - di));
        } else {
          for (int64_t c = 0; c < cols; ++c) dp_row[c] = scale * (p_row[c] * (dp_row[c] - di));
        }
      }
      gemm(false, false, rows, e, cols, T(1), dp, kCols, k + j0 * e, e, T(1), gq + i0 * e, e);
      gemm(true, false, cols, e, rows, T(1), dp, kCols, q + i0 * e, e, T(1), gk + j0 * e, e);
    }
  }
}

template <class T>
void backward(const Args& a) {
  const int64_t work = a.batch * a.length * a.keys * (a.features + a.value_features) * static_cast<int64_t>(sizeof(T));
  parallel_for(a.batch, work >= kParallelBytes, [&](int64_t begin, int64_t end) {
    std::vector<T> scratch;
    for (int64_t b = begin; b < end; ++b) backward_batch<T>(a, b, scratch);
  }, 1);
}

}  // namespace

bool attention_kernel(const ops::AttentionArgs& a) {
  const bool fwd = a.pass == Args::Pass::Forward;
  if (a.dtype == DType::Float64) fwd ? forward<double>(a) : backward<double>(a);
  else fwd ? forward<float>(a) : backward<float>(a);
  return true;
}

}  // namespace locus::cpu
