// im2col and col2im on the CPU (Im2colArgs): the general convolution path's data movement and
// the pooling windows; and max pooling with its gradient, both one pass. Rows of the column matrix are written with their out-of-image parts
// filled and the in-image run copied in one pass; col2im gathers each image row from the
// columns in the (i, j) order every device uses, so its sums are the same everywhere.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/dispatch.h"
#include "src/backends/cpu/parallel.h"

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

template <class T>
void max_pool_typed(const ops::Im2colArgs& a) {
  using C = compute_t<T>;
  const T* image = reinterpret_cast<const T*>(a.in);
  T* out = reinterpret_cast<T*>(a.out);
  const int64_t windows = a.out_h * a.out_w;
  const bool parallel = a.planes * windows * a.kernel_h * a.kernel_w * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.planes * windows, parallel, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t p = k / windows, oh = k % windows / a.out_w, ow = k % a.out_w;
      const T* plane = image + p * a.height * a.width;
      const int64_t h0 = oh * a.stride_h - a.pad_h, w0 = ow * a.stride_w - a.pad_w;
      // PyTorch's start: the first in-image element, at -inf.
      int64_t i0 = 0, j0 = 0;
      while (h0 + i0 * a.dilation_h < 0) ++i0;
      while (w0 + j0 * a.dilation_w < 0) ++j0;
      int64_t best = (h0 + i0 * a.dilation_h) * a.width + (w0 + j0 * a.dilation_w);
      C max = -std::numeric_limits<C>::infinity();
      for (int64_t i = i0; i < a.kernel_h; ++i) {
        const int64_t ih = h0 + i * a.dilation_h;
        if (ih >= a.height) break;
        for (int64_t j = j0; j < a.kernel_w; ++j) {
          const int64_t iw = w0 + j * a.dilation_w;
          if (iw >= a.width) break;
          const C v = C(plane[ih * a.width + iw]);
          if (v > max || std::isnan(v)) max = v, best = ih * a.width + iw;
        }
      }
      out[k] = static_cast<T>(max);
      a.indices[k] = best;
    }
  }, 1);
}

template <class T>
void max_pool_backward_typed(const ops::Im2colArgs& a) {
  using C = compute_t<T>;
  const T* grad = reinterpret_cast<const T*>(a.in);
  T* image = reinterpret_cast<T*>(a.out);
  const int64_t windows = a.out_h * a.out_w;
  const bool parallel = a.planes * a.height * a.width * static_cast<int64_t>(sizeof(T)) >= kParallelBytes;
  parallel_for(a.planes * a.height, parallel, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t p = r / a.height, ih = r % a.height;
      const T* g = grad + p * windows;
      const int64_t* idx = a.indices + p * windows;
      for (int64_t iw = 0; iw < a.width; ++iw) {
        const int64_t here = ih * a.width + iw;
        C acc = 0;
        for (int64_t i = 0; i < a.kernel_h; ++i) {
          const int64_t t = ih + a.pad_h - i * a.dilation_h;
          if (t < 0 || t % a.stride_h != 0 || t / a.stride_h >= a.out_h) continue;
          for (int64_t j = 0; j < a.kernel_w; ++j) {
            const int64_t u = iw + a.pad_w - j * a.dilation_w;
            if (u < 0 || u % a.stride_w != 0 || u / a.stride_w >= a.out_w) continue;
            const int64_t w = t / a.stride_h * a.out_w + u / a.stride_w;
            if (idx[w] == here) acc += C(g[w]);
          }
        }
        image[r * a.width + iw] = static_cast<T>(acc);
      }
    }
  }, 1);
}

}  // namespace

void im2col_kernel(const ops::Im2colArgs& args) {
  switch (args.op) {
    case ops::OpId::Im2col: LOCUS_DISPATCH_FLOATING(args.dtype, im2col_typed<scalar_t>(args)); break;
    case ops::OpId::Col2im: LOCUS_DISPATCH_FLOATING(args.dtype, col2im_typed<scalar_t>(args)); break;
    case ops::OpId::MaxPool2d: LOCUS_DISPATCH_FLOATING(args.dtype, max_pool_typed<scalar_t>(args)); break;
    default: LOCUS_DISPATCH_FLOATING(args.dtype, max_pool_backward_typed<scalar_t>(args)); break;
  }
}

}  // namespace locus::cpu
