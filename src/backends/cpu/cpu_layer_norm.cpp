// Layer and RMS normalisation on the CPU (LayerNormArgs, Note [Fused layer norm]): one pass
// over each row for its statistics (Welford's update in kLanes interleaved lanes, merged with
// Chan's formula, for layer norm; the mean square for RMS norm), one for y; the backward is one
// pass per row for its two sums and one for grad_input, with the weight's and bias's gradients
// summed per fixed block of rows and then over the blocks in order, so that they do not depend
// on the thread count.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/lane_sum.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

using Args = ops::LayerNormArgs;

// Chan's merge of two (count, mean, M2) summaries into the first.
template <class T>
void merge(T& count, T& mean, T& m2, T count_b, T mean_b, T m2_b) {
  const T total = count + count_b;
  if (total == T(0)) return;
  const T delta = mean_b - mean;
  mean += delta * count_b / total;
  m2 += m2_b + delta * delta * count * count_b / total;
  count = total;
}

// The row's mean and biased variance, Welford's way: lane k takes elements k, k + kLanes, ...
template <class T>
void welford(const T* x, int64_t n, T& mean, T& var) {
  T lane_mean[kLanes] = {}, lane_m2[kLanes] = {};
  const int64_t full = n / kLanes;
  for (int64_t i = 0; i < full; ++i) {
    const T inv = T(1) / static_cast<T>(i + 1);
    const T* chunk = x + i * kLanes;
    for (int k = 0; k < kLanes; ++k) {
      const T delta = chunk[k] - lane_mean[k];
      lane_mean[k] += delta * inv;
      lane_m2[k] += delta * (chunk[k] - lane_mean[k]);
    }
  }
  T count = 0, m = 0, m2 = 0;
  for (int k = 0; k < kLanes; ++k) merge(count, m, m2, static_cast<T>(full), lane_mean[k], lane_m2[k]);
  for (int64_t i = full * kLanes; i < n; ++i) {
    count += T(1);
    const T delta = x[i] - m;
    m += delta / count;
    m2 += delta * (x[i] - m);
  }
  mean = m;
  var = n > 0 ? m2 / static_cast<T>(n) : T(0);
}

template <class T>
void forward(const Args& a) {
  const T* x = reinterpret_cast<const T*>(a.x);
  const T* w = reinterpret_cast<const T*>(a.weight);
  const T* b = reinterpret_cast<const T*>(a.bias);
  T* y = reinterpret_cast<T*>(a.y);
  T* means = reinterpret_cast<T*>(a.mean);
  T* rstds = reinterpret_cast<T*>(a.rstd);
  const int64_t n = a.cols;
  parallel_for(a.rows, a.rows * n * static_cast<int64_t>(sizeof(T)) * 2 >= kParallelBytes, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* __restrict row = x + r * n;
      T* __restrict out = y + r * n;
      T mean = 0, var = 0;
      if (a.rms) var = n > 0 ? lane_sum<T>(n, [row](int64_t i) { return row[i] * row[i]; }) / static_cast<T>(n) : T(0);
      else welford(row, n, mean, var);
      const T rstd = T(1) / std::sqrt(var + static_cast<T>(a.eps));
      means[r] = mean, rstds[r] = rstd;
      if (w && b) for (int64_t c = 0; c < n; ++c) out[c] = (row[c] - mean) * rstd * w[c] + b[c];
      else if (w) for (int64_t c = 0; c < n; ++c) out[c] = (row[c] - mean) * rstd * w[c];
      else if (b) for (int64_t c = 0; c < n; ++c) out[c] = (row[c] - mean) * rstd + b[c];
      else for (int64_t c = 0; c < n; ++c) out[c] = (row[c] - mean) * rstd;
    }
  }, 1);
}

// Rows per block of the weight's and bias's partial sums: fixed by the row count alone, with
// at most kMaxBlocks blocks.
constexpr int64_t kMaxBlocks = 256;
int64_t block_rows(int64_t rows) { return std::max<int64_t>(16, (rows + kMaxBlocks - 1) / kMaxBlocks); }

template <class T>
void backward(const Args& a) {
  const T* x = reinterpret_cast<const T*>(a.x);
  const T* w = reinterpret_cast<const T*>(a.weight);
  const T* g = reinterpret_cast<const T*>(a.grad_out);
  const T* means = reinterpret_cast<const T*>(a.mean);
  const T* rstds = reinterpret_cast<const T*>(a.rstd);
  T* gx = reinterpret_cast<T*>(a.grad_input);
  const int64_t n = a.cols, per_block = block_rows(a.rows), blocks = (a.rows + per_block - 1) / per_block;
  const bool params = a.grad_weight || a.grad_bias;
  std::vector<T> partial(params ? static_cast<size_t>(2 * blocks * n) : 0, T(0));
  const bool parallel = a.rows * n * static_cast<int64_t>(sizeof(T)) * 3 >= kParallelBytes;
  parallel_for(blocks, parallel, [&](int64_t begin, int64_t end) {
    std::vector<T> gw(static_cast<size_t>(n));
    for (int64_t blk = begin; blk < end; ++blk) {
      T* dw = params ? partial.data() + 2 * blk * n : nullptr;
      T* db = params ? dw + n : nullptr;
      for (int64_t r = blk * per_block; r < std::min(a.rows, (blk + 1) * per_block); ++r) {
        const T* __restrict xr = x + r * n;
        const T* __restrict gr = g + r * n;
        T* __restrict out = gx + r * n;
        const T mean = means[r], rstd = rstds[r];
        for (int64_t c = 0; c < n; ++c) gw[static_cast<size_t>(c)] = w ? gr[c] * w[c] : gr[c];
        const T* gwr = gw.data();
        const T sum_gw = a.rms ? T(0) : lane_sum<T>(n, [gwr](int64_t i) { return gwr[i]; });
        const T sum_gw_xhat = lane_sum<T>(n, [=](int64_t i) { return gwr[i] * (xr[i] - mean) * rstd; });
        const T inv_n = T(1) / static_cast<T>(n);
        for (int64_t c = 0; c < n; ++c) {
          const T xhat = (xr[c] - mean) * rstd;
          out[c] = rstd * (gwr[c] - sum_gw * inv_n - xhat * sum_gw_xhat * inv_n);
        }
        if (dw)
          for (int64_t c = 0; c < n; ++c) {
            dw[c] += gr[c] * (xr[c] - mean) * rstd;
            db[c] += gr[c];
          }
      }
    }
  }, 1);
  if (!params) return;
  T* grad_w = reinterpret_cast<T*>(a.grad_weight);
  T* grad_b = reinterpret_cast<T*>(a.grad_bias);
  for (int64_t c = 0; c < n; ++c) {
    T sw = 0, sb = 0;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      sw += partial[static_cast<size_t>(2 * blk * n + c)];
      sb += partial[static_cast<size_t>((2 * blk + 1) * n + c)];
    }
    if (grad_w) grad_w[c] = sw;
    if (grad_b) grad_b[c] = sb;
  }
}

}  // namespace

void layer_norm_kernel(const ops::LayerNormArgs& a) {
  const bool fwd = a.pass == Args::Pass::Forward;
  if (a.dtype == DType::Float64) return fwd ? forward<double>(a) : backward<double>(a);
  return fwd ? forward<float>(a) : backward<float>(a);
}

}  // namespace locus::cpu
