// im2col and col2im on CUDA (Im2colArgs): one thread per column entry (im2col) or per image
// element (col2im); max pooling one thread per window, its gradient one per image element. col2im gathers: each thread sums the column entries that read its element
// in the (i, j) order the CPU kernel uses, so there are no atomics and the sums are the same on
// every device and every run.

#include <algorithm>

#include "src/backends/cuda/device_types.cuh"

namespace locus::cuda_backend {
namespace {

constexpr int kThreads = 256;

// Im2colArgs with the pointers typed, trivially copyable for a kernel argument.
template <class T>
struct Geometry {
  const T* in;
  T* out;
  int64_t planes, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w,
      out_h, out_w;
  T fill;
};

template <class T>
__global__ void __launch_bounds__(kThreads) im2col_kernel(Geometry<T> g, int64_t n) {
  const int64_t windows = g.out_h * g.out_w, kk = g.kernel_h * g.kernel_w;
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < n; k += int64_t{gridDim.x} * kThreads) {
    const int64_t ow = k % g.out_w, oh = k / g.out_w % g.out_h, row = k / windows;
    const int64_t j = row % g.kernel_w, i = row / g.kernel_w % g.kernel_h, p = row / kk;
    const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dilation_h;
    const int64_t iw = ow * g.stride_w - g.pad_w + j * g.dilation_w;
    const bool inside = ih >= 0 && ih < g.height && iw >= 0 && iw < g.width;
    g.out[k] = inside ? g.in[(p * g.height + ih) * g.width + iw] : g.fill;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) col2im_kernel(Geometry<T> g, int64_t n) {
  using C = compute_t<T>;
  const int64_t windows = g.out_h * g.out_w, kk = g.kernel_h * g.kernel_w;
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < n; k += int64_t{gridDim.x} * kThreads) {
    const int64_t iw = k % g.width, ih = k / g.width % g.height, p = k / (g.width * g.height);
    C acc = 0;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const int64_t t = ih + g.pad_h - i * g.dilation_h;
      if (t < 0 || t % g.stride_h != 0 || t / g.stride_h >= g.out_h) continue;
      const int64_t oh = t / g.stride_h;
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t u = iw + g.pad_w - j * g.dilation_w;
        if (u < 0 || u % g.stride_w != 0 || u / g.stride_w >= g.out_w) continue;
        acc += load(g.in + (p * kk + i * g.kernel_w + j) * windows + oh * g.out_w + u / g.stride_w);
      }
    }
    g.out[k] = convert<T>(acc);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) max_pool_kernel(Geometry<T> g, int64_t* indices, int64_t n) {
  using C = compute_t<T>;
  const int64_t windows = g.out_h * g.out_w;
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < n; k += int64_t{gridDim.x} * kThreads) {
    const int64_t p = k / windows, oh = k % windows / g.out_w, ow = k % g.out_w;
    const T* plane = g.in + p * g.height * g.width;
    const int64_t h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
    int64_t i0 = 0, j0 = 0;
    while (h0 + i0 * g.dilation_h < 0) ++i0;
    while (w0 + j0 * g.dilation_w < 0) ++j0;
    int64_t best = (h0 + i0 * g.dilation_h) * g.width + (w0 + j0 * g.dilation_w);
    C max = -INFINITY;
    for (int64_t i = i0; i < g.kernel_h; ++i) {
      const int64_t ih = h0 + i * g.dilation_h;
      if (ih >= g.height) break;
      for (int64_t j = j0; j < g.kernel_w; ++j) {
        const int64_t iw = w0 + j * g.dilation_w;
        if (iw >= g.width) break;
        const C v = load(plane + ih * g.width + iw);
        if (v > max || v != v) max = v, best = ih * g.width + iw;
      }
    }
    g.out[k] = convert<T>(max);
    if (indices) indices[k] = best;  // null: an inference pass that needs only the values
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) max_pool_backward_kernel(Geometry<T> g, const int64_t* indices, int64_t n) {
  using C = compute_t<T>;
  const int64_t windows = g.out_h * g.out_w;
  for (int64_t k = blockIdx.x * int64_t{kThreads} + threadIdx.x; k < n; k += int64_t{gridDim.x} * kThreads) {
    const int64_t iw = k % g.width, ih = k / g.width % g.height, p = k / (g.width * g.height);
    const int64_t here = ih * g.width + iw;
    C acc = 0;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      const int64_t t = ih + g.pad_h - i * g.dilation_h;
      if (t < 0 || t % g.stride_h != 0 || t / g.stride_h >= g.out_h) continue;
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t u = iw + g.pad_w - j * g.dilation_w;
        if (u < 0 || u % g.stride_w != 0 || u / g.stride_w >= g.out_w) continue;
        const int64_t w = p * windows + t / g.stride_h * g.out_w + u / g.stride_w;
        if (indices[w] == here) acc += load(g.in + w);
      }
    }
    g.out[k] = convert<T>(acc);
  }
}

template <class T>
cudaError_t im2col_typed(const ops::Im2colArgs& a, cudaStream_t stream) {
  Geometry<T> g{reinterpret_cast<const T*>(a.in), reinterpret_cast<T*>(a.out), a.planes, a.height, a.width,
                a.kernel_h, a.kernel_w, a.pad_h, a.pad_w, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w,
                a.out_h, a.out_w, convert<T>(a.fill)};
  int64_t n = a.planes * a.height * a.width;  // col2im and the max-pooling gradient: per image element
  if (a.op == ops::OpId::Im2col) n = a.planes * a.kernel_h * a.kernel_w * a.out_h * a.out_w;
  if (a.op == ops::OpId::MaxPool2d) n = a.planes * a.out_h * a.out_w;
  if (n == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20));
  switch (a.op) {
    case ops::OpId::Im2col: im2col_kernel<T><<<blocks, kThreads, 0, stream>>>(g, n); break;
    case ops::OpId::Col2im: col2im_kernel<T><<<blocks, kThreads, 0, stream>>>(g, n); break;
    case ops::OpId::MaxPool2d: max_pool_kernel<T><<<blocks, kThreads, 0, stream>>>(g, a.indices, n); break;
    default: max_pool_backward_kernel<T><<<blocks, kThreads, 0, stream>>>(g, a.indices, n); break;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_im2col(const ops::Im2colArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH_FLOAT(a.dtype, err = im2col_typed<scalar_t>(a, stream));
  return err;
}

}  // namespace locus::cuda_backend
