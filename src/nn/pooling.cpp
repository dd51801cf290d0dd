// Pooling (F::max_pool1d/2d, F::avg_pool1d/2d, the adaptive ones). Max pooling is one op
// (ops::max_pool2d: a window pass, and a gather for its gradient, which goes to each window's
// maximum, as PyTorch's); average pooling is ops::im2col and a sum, the adaptive ones products
// and gathers, so their gradients come from those ops.

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/indexing.h"
#include "locus/nn/functional/pooling.h"
#include "locus/nn/pooling.h"
#include "locus/ops.h"
#include "locus/products.h"
#include "locus/shape_ops.h"
#include "src/core/public_op.h"
#include "src/nn/conv_geometry.h"
#include "src/ops/im2col.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace functional {
namespace {

using locus::detail::error_prefix;

// One pooling call over 2 spatial dims (a 1-d call has a unit height).
struct PoolCall {
  const char* name;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
  int spatial = 2;  // the caller's spatial dims, for its rank check and messages
};

// PyTorch's checks of a pooling call; returns the window geometry.
ops::WindowGeometry checked_pool(const PoolCall& c, const Tensor& input) {
  const std::string p = error_prefix(c.name);
  if (c.spatial == 2 && input.dim() != 3 && input.dim() != 4)  // a 1-d caller checked its own rank
    throw ShapeError(p + "non-empty " + std::to_string(c.spatial + 1) + "D or " + std::to_string(c.spatial + 2) +
                     "D (batch mode) tensor expected for input, got " + std::to_string(input.dim()) + "D");
  if (!is_floating_point(input.dtype()))
    throw DTypeError(p + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
  check_window_args(p, c.kernel, c.stride, c.padding, c.dilation);
  for (size_t i = 0; i < c.kernel.size(); ++i)
    if (c.padding[i] > c.kernel[i] / 2)
      throw ValueError(p + "pad should be at most half of kernel size, but got pad=" + std::to_string(c.padding[i]) +
                       " and kernel_size=" + std::to_string(c.kernel[i]));
  const int64_t h = input.size(-2), w = input.size(-1);
  ops::WindowGeometry g = window_geometry(h, w, c.kernel[0], c.kernel[1], c.padding, c.stride, c.dilation, c.ceil_mode);
  if (g.out_h < 1 || g.out_w < 1) {
    const int64_t planes = input.dim() > 2 ? input.size(-3) : 1;
    std::ostringstream os;
    os << p << "Given input size: (" << planes << "x" << h << "x" << w << "). Calculated output size: (" << planes
       << "x" << g.out_h << "x" << g.out_w << "). Output size is too small";
    throw ShapeError(os.str());
  }
  return g;
}

// A [C, H, W] or [N, C, H, W] input as 4-d, and the function that gives results back the rank.
Tensor batched(const Tensor& x) { return x.dim() == 3 ? x.unsqueeze(0) : x; }
Tensor unbatched_like(const Tensor& r, const Tensor& input) { return input.dim() == 3 ? r.squeeze(0) : r; }

std::tuple<Tensor, Tensor> max_pool(const PoolCall& c, const Tensor& input, bool return_indices) {
  const ops::WindowGeometry g = checked_pool(c, input);
  auto [values, indices] = ops::max_pool2d(batched(input), g, return_indices);
  return {unbatched_like(values, input), indices.defined() ? unbatched_like(indices, input) : indices};
}

Tensor avg_pool(const PoolCall& c, const Tensor& input, bool count_include_pad, std::optional<int64_t> divisor_override) {
  if (divisor_override && *divisor_override == 0) throw ValueError(error_prefix(c.name) + "divisor must be not zero");
  const ops::WindowGeometry g = checked_pool(c, input);
  const Tensor x = batched(input);
  const int64_t n = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3), kk = g.kernel_h * g.kernel_w;
  const Tensor sums = sum(ops::im2col(x, g).view({n, ch, kk, g.out_h * g.out_w}), 2);
  Tensor out;
  if (divisor_override) {
    out = div(sums, static_cast<double>(*divisor_override));
  } else {
    // PyTorch's divisor: the window clipped to the padded input, or to the input itself.
    std::vector<double> divisor(static_cast<size_t>(g.out_h * g.out_w));
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int64_t h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
        int64_t h1 = std::min(h0 + g.kernel_h, h + g.pad_h), w1 = std::min(w0 + g.kernel_w, w + g.pad_w);
        const int64_t padded = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, h), w1 = std::min(w1, w);
        divisor[static_cast<size_t>(oh * g.out_w + ow)] =
            static_cast<double>(count_include_pad ? padded : (h1 - h0) * (w1 - w0));
      }
    out = div(sums, tensor(divisor, TensorOptions().dtype(x.dtype()).device(x.device())));
  }
  return unbatched_like(out.view({n, ch, g.out_h, g.out_w}), input);
}

PoolCall pool2d(const char* name, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                const std::vector<int64_t>& p, const std::vector<int64_t>& d, bool ceil) {
  return {name, k, s, p, d, ceil, 2};
}

// A 1-d call as the 2-d one over a unit height: kernel 1, stride 1, no padding in that dim.
PoolCall pool1d(const char* name, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  return {name, {1, k}, {1, s}, {0, p}, {1, d}, ceil, 1};
}

Tensor with_unit_height(const Tensor& x) { return x.unsqueeze(-2); }
Tensor without_unit_height(const Tensor& x) { return x.squeeze(-2); }

void check_rank_1d(const char* name, const Tensor& input) {
  if (input.dim() != 2 && input.dim() != 3)
    throw ShapeError(error_prefix(name) + "non-empty 2D or 3D (batch mode) tensor expected for input, got " +
                     std::to_string(input.dim()) + "D");
}

// Adaptive windows: output i of n over a size of `size` covers [floor(i size / n), ceil((i + 1) size / n)).
int64_t window_start(int64_t i, int64_t size, int64_t n) { return i * size / n; }
int64_t window_end(int64_t i, int64_t size, int64_t n) { return ((i + 1) * size + n - 1) / n; }

void check_adaptive(const char* name, const Tensor& input, const ExpandingArray<2>& size) {
  const std::string p = error_prefix(name);
  if (input.dim() != 3 && input.dim() != 4)
    throw ShapeError(p + "Expected 3D or 4D tensor, but got " + std::to_string(input.dim()) + "D");
  for (int64_t d = input.dim() - 2; d < input.dim(); ++d)
    if (input.size(d) == 0) {
      std::ostringstream os;
      os << p << "Expected input to have non-zero size for non-batch dimensions, but input has sizes " << input.shape()
         << " with dimension " << d << " being empty";
      throw ShapeError(os.str());
    }
  if (size[0] < 0 || size[1] < 0)
    throw ValueError(p + "output_size must not be negative, got " + tuple_repr(size.vec()));
  if (!is_floating_point(input.dtype()))
    throw DTypeError(p + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
}

// The [n, size] matrix that averages adaptive_avg_pool2d's windows of one dim.
Tensor averaging_matrix(int64_t n, int64_t size, const Tensor& like) {
  std::vector<double> a(static_cast<size_t>(n * size), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = window_start(i, size, n), e = window_end(i, size, n);
    for (int64_t k = b; k < e; ++k) a[static_cast<size_t>(i * size + k)] = 1.0 / static_cast<double>(e - b);
  }
  return tensor(a, Shape{n, size}, TensorOptions().dtype(like.dtype()).device(like.device()));
}

// max_pool2d and max_pool2d_with_indices: the first asks for no indices (only its gradient
// needs them).
std::tuple<Tensor, Tensor> max_pool2d_call(const Tensor& input, const MaxPool2dFuncOptions& o, bool return_indices) {
  const ops::PublicOp op("max_pool2d", {{input, "input"}});
  return max_pool(pool2d("max_pool2d", o.kernel_size().vec(), o.stride().vec(), o.padding().vec(), o.dilation().vec(),
                         o.ceil_mode()),
                  input, return_indices);
}

std::tuple<Tensor, Tensor> max_pool1d_call(const Tensor& input, const MaxPool1dFuncOptions& o, bool return_indices) {
  const ops::PublicOp op("max_pool1d", {{input, "input"}});
  check_rank_1d("max_pool1d", input);
  auto [values, indices] = max_pool(pool1d("max_pool1d", o.kernel_size()[0], o.stride()[0], o.padding()[0],
                                           o.dilation()[0], o.ceil_mode()),
                                    with_unit_height(input), return_indices);
  return {without_unit_height(values), indices.defined() ? without_unit_height(indices) : indices};
}

}  // namespace

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) { return std::get<0>(max_pool2d_call(input, o, false)); }

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return max_pool2d_call(input, o, true);
}

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) { return std::get<0>(max_pool1d_call(input, o, false)); }

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return max_pool1d_call(input, o, true);
}

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  const ops::PublicOp op("avg_pool2d", {{input, "input"}});
  return avg_pool(pool2d("avg_pool2d", o.kernel_size().vec(), o.stride().vec(), o.padding().vec(), {1, 1}, o.ceil_mode()),
                  input, o.count_include_pad(), o.divisor_override());
}

Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  const ops::PublicOp op("avg_pool1d", {{input, "input"}});
  check_rank_1d("avg_pool1d", input);
  return without_unit_height(avg_pool(pool1d("avg_pool1d", o.kernel_size()[0], o.stride()[0], o.padding()[0], 1, o.ceil_mode()),
                                      with_unit_height(input), o.count_include_pad(), o.divisor_override()));
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  const ops::PublicOp op("adaptive_avg_pool2d", {{input, "input"}});
  check_adaptive("adaptive_avg_pool2d", input, o.output_size());
  const int64_t oh = o.output_size()[0], ow = o.output_size()[1], h = input.size(-2), w = input.size(-1);
  if (oh == 1 && ow == 1) return mean(input, Shape{-2, -1}, true);
  // Each window's mean is the mean over its rows of the mean over its columns: two products.
  const Tensor rows = matmul(averaging_matrix(oh, h, input), input);
  return matmul(rows, averaging_matrix(ow, w, input).t());
}

Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, o));
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  const ops::PublicOp op("adaptive_max_pool2d", {{input, "input"}});
  check_adaptive("adaptive_max_pool2d", input, o.output_size());
  const int64_t oh = o.output_size()[0], ow = o.output_size()[1], h = input.size(-2), w = input.size(-1);
  if (oh == 0 || ow == 0) {  // no windows: empty results, as PyTorch
    Shape out = input.shape();
    out[out.size() - 2] = oh, out[out.size() - 1] = ow;
    return {empty(out, TensorOptions().dtype(input.dtype()).device(input.device())),
            empty(out, TensorOptions().dtype(DType::Int64).device(input.device()))};
  }
  // Every window read as kh x kw elements (the largest window's size), a shorter window
  // repeating its last row or column, which changes neither its maximum nor where it first is.
  int64_t kh = 0, kw = 0;
  for (int64_t i = 0; i < oh; ++i) kh = std::max(kh, window_end(i, h, oh) - window_start(i, h, oh));
  for (int64_t j = 0; j < ow; ++j) kw = std::max(kw, window_end(j, w, ow) - window_start(j, w, ow));
  std::vector<int64_t> where(static_cast<size_t>(oh * ow * kh * kw));
  size_t k = 0;
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b) {
          const int64_t r = std::min(window_start(i, h, oh) + a, window_end(i, h, oh) - 1);
          const int64_t c = std::min(window_start(j, w, ow) + b, window_end(j, w, ow) - 1);
          where[k++] = r * w + c;
        }
  const Tensor positions = tensor(where, TensorOptions().dtype(DType::Int64).device(input.device()));
  const Tensor flat = input.flatten(-2);
  Shape windows = flat.shape();
  windows[windows.size() - 1] = oh * ow;
  windows.push_back(kh * kw);
  const Tensor gathered = index_select(flat, -1, positions).view(windows);
  ValuesIndices m = max(gathered, -1);
  Shape table = Shape(windows.size(), 1);
  table[table.size() - 2] = oh * ow;
  table[table.size() - 1] = kh * kw;
  const Tensor chosen = gather(positions.view(table).expand(windows), -1, m.indices.unsqueeze(-1)).squeeze(-1);
  Shape out = input.shape();
  out[out.size() - 2] = oh, out[out.size() - 1] = ow;
  return {m.values.view(out), chosen.view(out)};
}

}  // namespace functional

// The layers: their forwards are their functions (options_module.h); how they print is here.

namespace {

template <class Options>
std::string max_pool_repr(const Options& o) {
  using functional::int_or_tuple_repr;
  return "kernel_size=" + int_or_tuple_repr(o.kernel_size().vec()) + ", stride=" + int_or_tuple_repr(o.stride().vec()) +
         ", padding=" + int_or_tuple_repr(o.padding().vec()) + ", dilation=" + int_or_tuple_repr(o.dilation().vec()) +
         ", ceil_mode=" + (o.ceil_mode() ? "True" : "False");
}

}  // namespace

namespace detail {

std::string max_pool1d_repr(const MaxPool1dOptions& o) { return max_pool_repr(o); }
std::string max_pool2d_repr(const MaxPool2dOptions& o) { return max_pool_repr(o); }

std::string avg_pool1d_repr(const AvgPool1dOptions& o) {
  using functional::tuple_repr;
  return "kernel_size=" + tuple_repr(o.kernel_size().vec()) + ", stride=" + tuple_repr(o.stride().vec()) +
         ", padding=" + tuple_repr(o.padding().vec());
}

std::string avg_pool2d_repr(const AvgPool2dOptions& o) {
  using functional::int_or_tuple_repr;
  return "kernel_size=" + int_or_tuple_repr(o.kernel_size().vec()) + ", stride=" + int_or_tuple_repr(o.stride().vec()) +
         ", padding=" + int_or_tuple_repr(o.padding().vec());
}

std::string adaptive_pool_repr(const functional::AdaptivePool2dFuncOptions& o) {
  return "output_size=" + functional::int_or_tuple_repr(o.output_size().vec());
}

}  // namespace detail

}  // namespace locus::nn
