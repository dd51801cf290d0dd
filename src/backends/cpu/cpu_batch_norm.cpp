// Batch norm's per-channel passes on the CPU (BatchNormArgs, Note [Batch norm in training]): the
// statistics, the normalisation y = x a + c, the backward's two sums and its input gradient,
// each one pass over the data instead of one op per term. A channel's sums run on one thread in
// a fixed order (samples, then positions, in kLanes interleaved accumulators that the compiler
// vectorises), so the results are the same at every thread count; float32 accumulates in double.
// Channels-last data has passes of its own (Note [Channels-last batch norm]).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/lane_sum.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

template <class T>
void statistics(const ops::BatchNormArgs& a, int64_t c) {
  const T* x = reinterpret_cast<const T*>(a.x);
  const int64_t stride = a.channels * a.inner, count = a.n * a.inner;
  double total = 0;
  for (int64_t n = 0; n < a.n; ++n) {
    const T* __restrict row = x + n * stride + c * a.inner;
    total += lane_sum<double>(a.inner, [row](int64_t i) { return static_cast<double>(row[i]); });
  }
  const double mean = total / static_cast<double>(count);
  double squares = 0;
  for (int64_t n = 0; n < a.n; ++n) {
    const T* __restrict row = x + n * stride + c * a.inner;
    squares += lane_sum<double>(a.inner, [row, mean](int64_t i) {
      const double d = static_cast<double>(row[i]) - mean;
      return d * d;
    });
  }
  reinterpret_cast<T*>(a.first)[c] = static_cast<T>(mean);
  reinterpret_cast<T*>(a.second)[c] = static_cast<T>(squares / static_cast<double>(count));
}

template <class T>
void backward_reduce(const ops::BatchNormArgs& a, int64_t c) {
  const T* x = reinterpret_cast<const T*>(a.x);
  const T* g = reinterpret_cast<const T*>(a.grad);
  const int64_t stride = a.channels * a.inner;
  double sum_g = 0, sum_gx = 0;
  for (int64_t n = 0; n < a.n; ++n) {
    const int64_t at = n * stride + c * a.inner;
    const T* __restrict xr = x + at;
    const T* __restrict gr = g + at;
    sum_g += lane_sum<double>(a.inner, [gr](int64_t i) { return static_cast<double>(gr[i]); });
    sum_gx += lane_sum<double>(a.inner, [gr, xr](int64_t i) { return static_cast<double>(gr[i]) * static_cast<double>(xr[i]); });
  }
  reinterpret_cast<T*>(a.first)[c] = static_cast<T>(sum_g);
  reinterpret_cast<T*>(a.second)[c] = static_cast<T>(sum_gx);
}

// Note [Channels-last batch norm]
// With channels-last data ([N, S, C] in memory: a row of C channels per pixel) a channel's
// elements are C apart, so the passes run over rows with the channels as the vectorised inner
// loop. The sums split the rows into chunks of a size fixed by the shape alone (never by the
// thread count), sum each chunk into its own per-channel partials in row order, then add the
// chunks' partials in chunk order: the same result at every thread count, as the NCHW passes.
constexpr int64_t kChunkElements = 8192;

template <class T>
void batch_norm_channels_last(const ops::BatchNormArgs& a, bool parallel) {
  using Pass = ops::BatchNormArgs::Pass;
  const int64_t rows = a.n * a.inner, channels = a.channels;
  const T* x = reinterpret_cast<const T*>(a.x);
  const T* g = reinterpret_cast<const T*>(a.grad);
  if (a.pass == Pass::BackwardInput || a.pass == Pass::Affine) {
    const T *ca = reinterpret_cast<const T*>(a.a), *cb = reinterpret_cast<const T*>(a.b),
            *cc = reinterpret_cast<const T*>(a.c);
    T* out = reinterpret_cast<T*>(a.out);
    const bool affine = a.pass == Pass::Affine;
    parallel_for(rows, parallel, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* __restrict xr = x + r * channels;
        T* __restrict o = out + r * channels;
        if (affine) {
          if (cc) for (int64_t c = 0; c < channels; ++c) o[c] = xr[c] * ca[c] + cc[c];
          else for (int64_t c = 0; c < channels; ++c) o[c] = xr[c] * ca[c];
          continue;
        }
        const T* __restrict gr = g + r * channels;
        for (int64_t c = 0; c < channels; ++c) o[c] = gr[c] * ca[c] + xr[c] * cb[c] + cc[c];
      }
    }, 1);
    return;
  }
  // At least 64 rows a chunk: with thousands of channels the partials stay a fraction of x.
  const int64_t chunk = std::max<int64_t>(64, kChunkElements / std::max<int64_t>(channels, 1));
  const int64_t chunks = (rows + chunk - 1) / chunk;
  // Per chunk, two [C] partials: sum x and sum (x - mean)^2, or sum g and sum g x.
  std::vector<double> partial(static_cast<size_t>(chunks * channels * 2), 0.0);
  const auto over_chunks = [&](auto&& add_row) {
    parallel_for(chunks, parallel, [&](int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        double* __restrict first = partial.data() + k * channels * 2;
        double* __restrict second = first + channels;
        for (int64_t r = k * chunk; r < std::min(rows, (k + 1) * chunk); ++r) add_row(r, first, second);
      }
    }, 1);
  };
  // The chunks' partials added in chunk order into [C] totals.
  const auto totals = [&](int which, std::vector<double>& into) {
    into.assign(static_cast<size_t>(channels), 0.0);
    for (int64_t k = 0; k < chunks; ++k) {
      const double* p = partial.data() + k * channels * 2 + which * channels;
      for (int64_t c = 0; c < channels; ++c) into[c] += p[c];
    }
  };
  std::vector<double> first, second;
  if (a.pass == Pass::Statistics) {
    over_chunks([&](int64_t r, double* __restrict sum, double*) {
      const T* __restrict xr = x + r * channels;
      for (int64_t c = 0; c < channels; ++c) sum[c] += static_cast<double>(xr[c]);
    });
    totals(0, first);
    const double count = static_cast<double>(rows);
    for (double& m : first) m /= count;
    const double* mean = first.data();
    over_chunks([&](int64_t r, double*, double* __restrict squares) {
      const T* __restrict xr = x + r * channels;
      for (int64_t c = 0; c < channels; ++c) {
        const double d = static_cast<double>(xr[c]) - mean[c];
        squares[c] += d * d;
      }
    });
    totals(1, second);
    for (double& v : second) v /= count;
  } else {
    over_chunks([&](int64_t r, double* __restrict sum_g, double* __restrict sum_gx) {
      const T* __restrict xr = x + r * channels;
      const T* __restrict gr = g + r * channels;
      for (int64_t c = 0; c < channels; ++c) {
        sum_g[c] += static_cast<double>(gr[c]);
        sum_gx[c] += static_cast<double>(gr[c]) * static_cast<double>(xr[c]);
      }
    });
    totals(0, first);
    totals(1, second);
  }
  for (int64_t c = 0; c < channels; ++c) {
    reinterpret_cast<T*>(a.first)[c] = static_cast<T>(first[c]);
    reinterpret_cast<T*>(a.second)[c] = static_cast<T>(second[c]);
  }
}

template <class T>
void batch_norm(const ops::BatchNormArgs& a) {
  const int64_t total = a.n * a.channels * a.inner;
  const bool parallel = total * static_cast<int64_t>(sizeof(T)) * 2 >= kParallelBytes;
  if (a.channels_last) return batch_norm_channels_last<T>(a, parallel);
  if (a.pass == ops::BatchNormArgs::Pass::BackwardInput || a.pass == ops::BatchNormArgs::Pass::Affine) {
    const bool affine = a.pass == ops::BatchNormArgs::Pass::Affine;
    const T* x = reinterpret_cast<const T*>(a.x);
    const T* g = reinterpret_cast<const T*>(a.grad);
    const T *ca = reinterpret_cast<const T*>(a.a), *cb = reinterpret_cast<const T*>(a.b),
            *cc = reinterpret_cast<const T*>(a.c);
    T* out = reinterpret_cast<T*>(a.out);
    // One task per (sample, channel) row: its coefficients, then a vectorised loop.
    parallel_for(a.n * a.channels, parallel, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % a.channels;
        const T ka = ca[c], kc = cc ? cc[c] : T(0);
        const T* __restrict xr = x + r * a.inner;
        T* __restrict o = out + r * a.inner;
        if (affine) {
          for (int64_t i = 0; i < a.inner; ++i) o[i] = xr[i] * ka + kc;
          continue;
        }
        const T kb = cb[c];
        const T* __restrict gr = g + r * a.inner;
        for (int64_t i = 0; i < a.inner; ++i) o[i] = gr[i] * ka + xr[i] * kb + kc;
      }
    }, 1);
    return;
  }
  const bool stats = a.pass == ops::BatchNormArgs::Pass::Statistics;
  parallel_for(a.channels, parallel, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) stats ? statistics<T>(a, c) : backward_reduce<T>(a, c);
  }, 1);
}

}  // namespace

void batch_norm_kernel(const ops::BatchNormArgs& args) {
  if (args.dtype == DType::Float64) batch_norm<double>(args);
  else batch_norm<float>(args);
}

}  // namespace locus::cpu
