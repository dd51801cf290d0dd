// im2col and col2im on CUDA (Im2colArgs): one thread per column entry (im2col) or per image
// element (col2im). col2im gathers: each thread sums the column entries that read its element
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
cudaError_t im2col_typed(const ops::Im2colArgs& a, cudaStream_t stream) {
  Geometry<T> g{reinterpret_cast<const T*>(a.in), reinterpret_cast<T*>(a.out), a.planes, a.height, a.width,
                a.kernel_h, a.kernel_w, a.pad_h, a.pad_w, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w,
                a.out_h, a.out_w, convert<T>(a.fill)};
  const bool forward = a.op == ops::OpId::Im2col;
  const int64_t n = forward ? a.planes * a.kernel_h * a.kernel_w * a.out_h * a.out_w : a.planes * a.height * a.width;
  if (n == 0) return cudaSuccess;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20);
  if (forward) im2col_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(g, n);
  else col2im_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(g, n);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_im2col(const ops::Im2colArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  LOCUS_CUDA_DISPATCH_FLOAT(a.dtype, err = im2col_typed<scalar_t>(a, stream));
  return err;
}

}  // namespace locus::cuda_backend
