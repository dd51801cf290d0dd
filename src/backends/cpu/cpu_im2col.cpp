// im2col and col2im on the CPU (Im2colArgs): the general convolution path's data movement and
// the pooling windows; and max pooling with its gradient, both one pass. Rows of the column matrix are written with their out-of-image parts
// filled and the in-image run copied in one pass; col2im gathers each image row from the
// columns in the (i, j) order every device uses, so its sums are the same everywhere.

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"
#include "src/backends/cpu/vec_math.h"

namespace locus::cpu {
namespace {

// The windows ow whose element reads image column ow * stride + offset inside [0, width):
// [lo, hi), clamped to [0, count).
void inside_range(int64_t offset, int64_t stride, int64_t width, int64_t count, int64_t& lo, int64_t& hi) {
  // ow * stride + offset >= 0  <=>  ow >= ceil(-offset / stride)
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // ow * stride + offset < width  <=>  ow < ceil((width - offset) / stride)
  hi = width - offset <= 0 ? 0 : (width - offset + stride - 1) / stride;
  lo = std::min(lo, count);
  hi = std::clamp(hi, lo, count);
}

template <class T>
void im2col_typed(const ops::Im2colArgs& a) {
  const T* image = reinterpret_cast<const T*>(a.in);
  T* columns = reinterpret_cast<T*>(a.out);
  const int64_t kk = a.kernel_h * a.kernel_w, windows = a.out_h * a.out_w;
  const T fill = static_cast<T>(static_cast<compute_t<T>>(a.fill));
  const bool parallel = a.planes * kk * windows * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.planes * kk, parallel, [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t p = row / kk, i = row % kk / a.kernel_w, j = row % a.kernel_w;
      const T* plane = image + p * a.height * a.width;
      T* dst = columns + row * windows;
      const int64_t w_offset = j * a.dilation_w - a.pad_w;
      int64_t lo, hi;
      inside_range(w_offset, a.stride_w, a.width, a.out_w, lo, hi);
      for (int64_t oh = 0; oh < a.out_h; ++oh, dst += a.out_w) {
        const int64_t ih = oh * a.stride_h - a.pad_h + i * a.dilation_h;
        if (ih < 0 || ih >= a.height) {
          std::fill(dst, dst + a.out_w, fill);
          continue;
        }
        const T* src = plane + ih * a.width;
        std::fill(dst, dst + lo, fill);
        if (a.stride_w == 1) std::copy(src + (lo + w_offset), src + (hi + w_offset), dst + lo);
        else
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * a.stride_w + w_offset];
        std::fill(dst + hi, dst + a.out_w, fill);
      }
    }
  }, 1);
}

template <class T>
void col2im_typed(const ops::Im2colArgs& a) {
  using C = compute_t<T>;
  const T* columns = reinterpret_cast<const T*>(a.in);
  T* image = reinterpret_cast<T*>(a.out);
  const int64_t kk = a.kernel_h * a.kernel_w, windows = a.out_h * a.out_w;
  const bool parallel = a.planes * kk * windows * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.planes * a.height, parallel, [&](int64_t b, int64_t e) {
    std::vector<C> acc(static_cast<size_t>(a.width));
    for (int64_t r = b; r < e; ++r) {
      const int64_t p = r / a.height, ih = r % a.height;
      std::fill(acc.begin(), acc.end(), C(0));
      for (int64_t i = 0; i < a.kernel_h; ++i) {
        const int64_t t = ih + a.pad_h - i * a.dilation_h;
        if (t < 0 || t % a.stride_h != 0 || t / a.stride_h >= a.out_h) continue;
        const int64_t oh = t / a.stride_h;
        for (int64_t j = 0; j < a.kernel_w; ++j) {
          const T* src = columns + ((p * kk + i * a.kernel_w + j) * windows) + oh * a.out_w;
          const int64_t w_offset = j * a.dilation_w - a.pad_w;
          int64_t lo, hi;
          inside_range(w_offset, a.stride_w, a.width, a.out_w, lo, hi);
          C* dst = acc.data();
          if (a.stride_w == 1)
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow + w_offset] += C(src[ow]);
          else
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow * a.stride_w + w_offset] += C(src[ow]);
        }
      }
      T* out = image + r * a.width;
      for (int64_t w = 0; w < a.width; ++w) out[w] = static_cast<T>(acc[static_cast<size_t>(w)]);
    }
  }, 1);
}

// The kernel offsets i in [lo, hi) whose element start + i * dilation lies in [0, size).
void kernel_range(int64_t start, int64_t dilation, int64_t kernel, int64_t size, int64_t& lo, int64_t& hi) {
  lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  hi = start >= size ? 0 : std::min(kernel, (size - start + dilation - 1) / dilation);
  hi = std::max(hi, lo);
}

// A pooling pass's geometry, copied out of its arguments: locals, since the kernels' writes
// through raw pointers could otherwise alias the argument struct's fields.
struct PoolWindows {
  int64_t height, width, out_h, out_w, kh, kw, sh, sw, ph, pw, dh, dw;
  explicit PoolWindows(const ops::Im2colArgs& a)
      : height(a.height), width(a.width), out_h(a.out_h), out_w(a.out_w), kh(a.kernel_h), kw(a.kernel_w),
        sh(a.stride_h), sw(a.stride_w), ph(a.pad_h), pw(a.pad_w), dh(a.dilation_h), dw(a.dilation_w) {}
};

// Calls f(window) for each window (oh * out_w + ow) whose kernel covers image element (ih, iw),
// in the order (i, j) of the kernel offsets that reach it: the order both backward passes sum in.
template <class F>
void for_each_covering_window(const PoolWindows& g, int64_t ih, int64_t iw, F&& f) {
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t t = ih + g.ph - i * g.dh;
    if (t < 0 || t % g.sh != 0 || t / g.sh >= g.out_h) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t u = iw + g.pw - j * g.dw;
      if (u < 0 || u % g.sw != 0 || u / g.sw >= g.out_w) continue;
      f(t / g.sh * g.out_w + u / g.sw);
    }
  }
}

// PyTorch's rule for a window's maximum, without a branch (random data makes the comparison
// unpredictable): a larger value or a NaN takes over, so the first maximum wins and the last
// NaN does.
template <class C>
inline void take_max(C v, int64_t at, C& max, int64_t& best) {
  const bool take = (v > max) | (v != v);  // `|`, not `||`: no branch between the two tests
  max = take ? v : max;
  best = take ? at : best;
}

// One output row of 2x2 windows at stride 2 from image rows `row0` and `row1` (starting at
// flat position `top`), with the positions when `kIndices`. Offsets within the window and
// restrict pointers leave the loop without dependences between windows, and the compiler
// vectorises it.
template <class T, bool kIndices>
void max_pool_row_2x2(const T* __restrict row0, const T* __restrict row1, T* __restrict out,
                      int64_t* __restrict index, int64_t out_w, int64_t width, int64_t top) {
  using C = compute_t<T>;
  for (int64_t ow = 0; ow < out_w; ++ow) {
    C max = C(row0[2 * ow]);
    int64_t best = 0;
    take_max(C(row0[2 * ow + 1]), 1, max, best);
    take_max(C(row1[2 * ow]), width, max, best);
    take_max(C(row1[2 * ow + 1]), width + 1, max, best);
    out[ow] = static_cast<T>(max);
    if constexpr (kIndices) index[ow] = top + 2 * ow + best;
  }
}

#if LOCUS_CPU_AVX2
// The larger of each lane of a and b, NaN when either is (PyTorch's maxima propagate NaN;
// _mm256_max_ps alone returns b when a is NaN).
inline __m256 max_with_nan(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

// Eight 2x2 windows: 16 floats of each row, the column pairs' maxima, then the pairs side by
// side (shuffle takes the even and the odd lanes of each 128-bit half; the permute puts the
// halves back in order).
inline __m256 max_of_eight_windows(__m256 top_lo, __m256 top_hi, __m256 bottom_lo, __m256 bottom_hi) {
  const __m256 lo = max_with_nan(top_lo, bottom_lo), hi = max_with_nan(top_hi, bottom_hi);
  const __m256 even = _mm256_shuffle_ps(lo, hi, 0x88), odd = _mm256_shuffle_ps(lo, hi, 0xdd);
  const __m256 m = max_with_nan(even, odd);
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xd8));
}

// The first k lanes set (k in [0, 8]).
inline __m256i first_lanes(int64_t k) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// max_pool_row_2x2 for float32 values alone (an inference pass): eight windows per step and the
// last few under a mask, where the compiler's loop left a scalar, branching tail that took most
// of the time at a CNN's short rows (14 windows: 8 in vectors, 6 one by one).
void max_pool_row_2x2_values(const float* row0, const float* row1, float* out, int64_t out_w) {
  int64_t ow = 0;
  for (; ow + 8 <= out_w; ow += 8) {
    const float *t = row0 + 2 * ow, *b = row1 + 2 * ow;
    _mm256_storeu_ps(out + ow, max_of_eight_windows(_mm256_loadu_ps(t), _mm256_loadu_ps(t + 8), _mm256_loadu_ps(b),
                                                    _mm256_loadu_ps(b + 8)));
  }
  const int64_t rest = out_w - ow;
  if (rest == 0) return;
  const __m256i lo = first_lanes(std::min<int64_t>(2 * rest, 8)), hi = first_lanes(std::max<int64_t>(2 * rest - 8, 0));
  const float *t = row0 + 2 * ow, *b = row1 + 2 * ow;
  const __m256 m = max_of_eight_windows(_mm256_maskload_ps(t, lo), _mm256_maskload_ps(t + 8, hi),
                                        _mm256_maskload_ps(b, lo), _mm256_maskload_ps(b + 8, hi));
  _mm256_maskstore_ps(out + ow, first_lanes(rest), m);
}
#endif

template <class T>
void max_pool_typed(const ops::Im2colArgs& a) {
  using C = compute_t<T>;
  const T* image = reinterpret_cast<const T*>(a.in);
  T* out = reinterpret_cast<T*>(a.out);
  int64_t* indices = a.indices;  // null: an inference pass that needs only the values
  // Locals: the writes through `indices` could alias the argument struct's fields otherwise.
  const PoolWindows geo(a);
  const int64_t reads = a.planes * geo.out_h * geo.out_w * geo.kh * geo.kw;
  const bool parallel = reads * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  // The CNNs' 2x2 windows at stride 2, all inside the image: four reads per window, no ranges.
  const bool two_by_two = geo.kh == 2 && geo.kw == 2 && geo.sh == 2 && geo.sw == 2 && geo.ph == 0 && geo.pw == 0 &&
                          geo.dh == 1 && geo.dw == 1 && 2 * geo.out_h <= geo.height && 2 * geo.out_w <= geo.width;
  // One output row per task: the window rows are found once per row, columns once per window.
  parallel_for(a.planes * geo.out_h, parallel, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t p = r / geo.out_h, oh = r % geo.out_h;
      const T* plane = image + p * geo.height * geo.width;
      T* out_row = out + r * geo.out_w;
      int64_t* index_row = indices ? indices + r * geo.out_w : nullptr;
      if (two_by_two) {
        const int64_t top = 2 * oh * geo.width;
        const T* row0 = plane + top;
        const T* row1 = row0 + geo.width;
        if (index_row) {
          max_pool_row_2x2<T, true>(row0, row1, out_row, index_row, geo.out_w, geo.width, top);
          continue;
        }
#if LOCUS_CPU_AVX2
        if constexpr (std::is_same_v<T, float>) {
          max_pool_row_2x2_values(row0, row1, out_row, geo.out_w);
          continue;
        }
#endif
        max_pool_row_2x2<T, false>(row0, row1, out_row, nullptr, geo.out_w, geo.width, top);
        continue;
      }
      const int64_t h0 = oh * geo.sh - geo.ph;
      int64_t i_lo, i_hi;
      kernel_range(h0, geo.dh, geo.kh, geo.height, i_lo, i_hi);
      for (int64_t ow = 0; ow < geo.out_w; ++ow) {
        const int64_t w0 = ow * geo.sw - geo.pw;
        int64_t j_lo, j_hi;
        kernel_range(w0, geo.dw, geo.kw, geo.width, j_lo, j_hi);
        // PyTorch's start: the first in-image element, at -inf.
        int64_t best = (h0 + i_lo * geo.dh) * geo.width + w0 + j_lo * geo.dw;
        C max = -std::numeric_limits<C>::infinity();
        for (int64_t i = i_lo; i < i_hi; ++i) {
          const int64_t row = (h0 + i * geo.dh) * geo.width + w0;
          for (int64_t j = j_lo; j < j_hi; ++j) take_max(C(plane[row + j * geo.dw]), row + j * geo.dw, max, best);
        }
        out_row[ow] = static_cast<T>(max);
        if (index_row) index_row[ow] = best;
      }
    }
  }, 1);
}

template <class T>
void max_pool_backward_typed(const ops::Im2colArgs& a) {
  using C = compute_t<T>;
  const T* grad = reinterpret_cast<const T*>(a.in);
  T* image = reinterpret_cast<T*>(a.out);
  const int64_t* indices = a.indices;
  const PoolWindows geo(a);
  const int64_t windows = geo.out_h * geo.out_w;
  const bool parallel = a.planes * geo.height * geo.width * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  if (geo.sh >= (geo.kh - 1) * geo.dh + 1 && geo.sw >= (geo.kw - 1) * geo.dw + 1) {
    // Windows that do not overlap (the usual 2x2 stride 2): no element is the maximum of two
    // windows, so each window writes its gradient where its maximum is, in any order.
    parallel_for(a.planes, parallel, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        T* plane = image + p * geo.height * geo.width;
        std::fill(plane, plane + geo.height * geo.width, T(0));
        const T* g = grad + p * windows;
        const int64_t* idx = indices + p * windows;
        for (int64_t k = 0; k < windows; ++k) plane[idx[k]] = g[k];
      }
    }, 1);
    return;
  }
  // Overlapping windows: each element gathers the gradients of the windows whose maximum it is,
  // in the order (i, j), as the CUDA kernel does.
  parallel_for(a.planes * geo.height, parallel, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t p = r / geo.height, ih = r % geo.height;
      const T* g = grad + p * windows;
      const int64_t* idx = indices + p * windows;
      for (int64_t iw = 0; iw < geo.width; ++iw) {
        const int64_t here = ih * geo.width + iw;
        C acc = 0;
        for_each_covering_window(geo, ih, iw, [&](int64_t w) {
          if (idx[w] == here) acc += C(g[w]);
        });
        image[r * geo.width + iw] = static_cast<T>(acc);
      }
    }
  }, 1);
}

// Note [Channels-last max pooling]
// With channels-last images ([N, H, W, C]: the channels of a pixel side by side) a window's
// elements for every channel are C-element rows, so the passes run per window with the channels
// as the vectorised inner loop: take_max over the window's pixels in the same (i, j) order as
// the planes' pass, so the maxima and their positions (ih * W + iw, per channel) are the same.
// The backward gathers in the same order as the planes' pass: the same sums.
template <class T>
void max_pool_channels_last(const ops::Im2colArgs& a) {
  using C = compute_t<T>;
  const T* image = reinterpret_cast<const T*>(a.in);
  T* out = reinterpret_cast<T*>(a.out);
  int64_t* indices = a.indices;
  const int64_t channels = a.channels_last, batch = a.planes / channels;
  const PoolWindows geo(a);
  const int64_t reads = a.planes * geo.out_h * geo.out_w * geo.kh * geo.kw;
  const bool parallel = reads * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(batch * geo.out_h, parallel, [&](int64_t b, int64_t e) {
    std::vector<C> max(static_cast<size_t>(channels));
    std::vector<int64_t> best(static_cast<size_t>(channels));
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / geo.out_h, oh = r % geo.out_h;
      const T* picture = image + n * geo.height * geo.width * channels;
      const int64_t h0 = oh * geo.sh - geo.ph;
      int64_t i_lo, i_hi;
      kernel_range(h0, geo.dh, geo.kh, geo.height, i_lo, i_hi);
      for (int64_t ow = 0; ow < geo.out_w; ++ow) {
        const int64_t w0 = ow * geo.sw - geo.pw;
        int64_t j_lo, j_hi;
        kernel_range(w0, geo.dw, geo.kw, geo.width, j_lo, j_hi);
        C* __restrict m = max.data();
        int64_t* __restrict at = best.data();
        std::fill(max.begin(), max.end(), -std::numeric_limits<C>::infinity());
        std::fill(best.begin(), best.end(), (h0 + i_lo * geo.dh) * geo.width + w0 + j_lo * geo.dw);
        for (int64_t i = i_lo; i < i_hi; ++i) {
          for (int64_t j = j_lo; j < j_hi; ++j) {
            const int64_t position = (h0 + i * geo.dh) * geo.width + w0 + j * geo.dw;
            const T* __restrict pixel = picture + position * channels;
            for (int64_t c = 0; c < channels; ++c) take_max(C(pixel[c]), position, m[c], at[c]);
          }
        }
        const int64_t window = (r * geo.out_w + ow) * channels;
        for (int64_t c = 0; c < channels; ++c) out[window + c] = static_cast<T>(m[c]);
        if (indices)
          for (int64_t c = 0; c < channels; ++c) indices[window + c] = at[c];
      }
    }
  }, 1);
}

template <class T>
void max_pool_backward_channels_last(const ops::Im2colArgs& a) {
  using C = compute_t<T>;
  const T* grad = reinterpret_cast<const T*>(a.in);
  T* image = reinterpret_cast<T*>(a.out);
  const int64_t* indices = a.indices;
  const int64_t channels = a.channels_last, batch = a.planes / channels;
  const PoolWindows geo(a);
  const bool parallel = a.planes * geo.height * geo.width * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  // Each image pixel gathers, per channel, the gradients of the windows whose maximum it is.
  parallel_for(batch * geo.height, parallel, [&](int64_t b, int64_t e) {
    std::vector<C> acc(static_cast<size_t>(channels));
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / geo.height, ih = r % geo.height;
      const T* g = grad + n * geo.out_h * geo.out_w * channels;
      const int64_t* idx = indices + n * geo.out_h * geo.out_w * channels;
      for (int64_t iw = 0; iw < geo.width; ++iw) {
        const int64_t here = ih * geo.width + iw;
        std::fill(acc.begin(), acc.end(), C(0));
        C* __restrict sum = acc.data();
        for_each_covering_window(geo, ih, iw, [&](int64_t w) {
          const T* __restrict gw = g + w * channels;
          const int64_t* __restrict at = idx + w * channels;
          for (int64_t c = 0; c < channels; ++c) sum[c] += at[c] == here ? C(gw[c]) : C(0);
        });
        T* pixel = image + (r * geo.width + iw) * channels;
        for (int64_t c = 0; c < channels; ++c) pixel[c] = static_cast<T>(sum[c]);
      }
    }
  }, 1);
}

}  // namespace

void im2col_kernel(const ops::Im2colArgs& args) {
  if (args.channels_last && args.op == ops::OpId::MaxPool2d) {
    LOCUS_DISPATCH_FLOATING(args.dtype, max_pool_channels_last<scalar_t>(args));
    return;
  }
  if (args.channels_last && args.op == ops::OpId::MaxPool2dBackward) {
    LOCUS_DISPATCH_FLOATING(args.dtype, max_pool_backward_channels_last<scalar_t>(args));
    return;
  }
  switch (args.op) {
    case ops::OpId::Im2col: LOCUS_DISPATCH_FLOATING(args.dtype, im2col_typed<scalar_t>(args)); break;
    case ops::OpId::Col2im: LOCUS_DISPATCH_FLOATING(args.dtype, col2im_typed<scalar_t>(args)); break;
    case ops::OpId::MaxPool2d: LOCUS_DISPATCH_FLOATING(args.dtype, max_pool_typed<scalar_t>(args)); break;
    default: LOCUS_DISPATCH_FLOATING(args.dtype, max_pool_backward_typed<scalar_t>(args)); break;
  }
}

}  // namespace locus::cpu
