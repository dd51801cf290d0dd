// Window arithmetic shared by the convolutions and pooling (conv_geometry.h).

#include "src/nn/conv_geometry.h"

#include "locus/errors.h"

namespace locus::nn::functional {
namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

int64_t window_count(int64_t size, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  int64_t count = floor_div(span + (ceil_mode ? stride - 1 : 0), stride) + 1;
  // A last window must start inside the input or the left padding (PyTorch's rule).
  if (ceil_mode && count > 0 && (count - 1) * stride >= size + pad) --count;
  return count;
}

ops::WindowGeometry window_geometry(int64_t h, int64_t w, int64_t kernel_h, int64_t kernel_w,
                                    const std::vector<int64_t>& padding, const std::vector<int64_t>& stride,
                                    const std::vector<int64_t>& dilation, bool ceil_mode) {
  ops::WindowGeometry g;
  g.kernel_h = kernel_h, g.kernel_w = kernel_w;
  g.pad_h = padding[0], g.pad_w = padding[1];
  g.stride_h = stride[0], g.stride_w = stride[1];
  g.dilation_h = dilation[0], g.dilation_w = dilation[1];
  g.out_h = window_count(h, kernel_h, g.pad_h, g.stride_h, g.dilation_h, ceil_mode);
  g.out_w = window_count(w, kernel_w, g.pad_w, g.stride_w, g.dilation_w, ceil_mode);
  return g;
}

void check_window_args(const std::string& prefix, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  for (int64_t k : kernel)
    if (k <= 0) throw ValueError(prefix + "kernel size should be greater than zero, but got kernel_size=" + tuple_repr(kernel));
  for (int64_t s : stride)
    if (s <= 0) throw ValueError(prefix + "stride should be greater than zero, but got stride=" + tuple_repr(stride));
  for (int64_t d : dilation)
    if (d <= 0) throw ValueError(prefix + "dilation should be greater than zero, but got dilation=" + tuple_repr(dilation));
  for (int64_t p : padding)
    if (p < 0) throw ValueError(prefix + "padding should be non-negative, but got padding=" + tuple_repr(padding));
}

std::string tuple_repr(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string int_or_tuple_repr(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != v[0]) return tuple_repr(v);
  return std::to_string(v[0]);
}

}  // namespace locus::nn::functional
