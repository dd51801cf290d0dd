// F::interpolate and nn::Upsample: PyTorch 1.13's source indices and weights (its CPU
// kernels' arithmetic, in float for float inputs) applied as gathers along each spatial dim and
// weighted sums, so the gradient comes from index_select's and every device resizes.

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional/upsampling.h"
#include "locus/nn/upsampling.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/conv_geometry.h"
#include "src/nn/python_repr.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace functional {
namespace {

using locus::detail::error_prefix;

std::string p() { return error_prefix("interpolate"); }

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// One spatial dim's plan: sizes, and the scale_factor PyTorch hands its kernel (none when the
// size was given or is recomputed).
struct DimPlan {
  int64_t in = 0, out = 0;
  std::optional<double> scale;
};

// PyTorch's compute_scales_value: 1 / scale_factor when one is given, else in / out.
template <class A>
A scale_value(const DimPlan& d) {
  return d.scale && *d.scale > 0 ? static_cast<A>(1.0 / *d.scale) : static_cast<A>(d.in) / static_cast<A>(d.out);
}

// PyTorch's nearest_idx.
std::vector<int64_t> nearest_indices(const DimPlan& d) {
  std::vector<int64_t> idx(static_cast<size_t>(d.out));
  const float scale = scale_value<float>(d);
  for (int64_t i = 0; i < d.out; ++i) {
    if (d.out == d.in) idx[static_cast<size_t>(i)] = i;
    else if (d.out == 2 * d.in) idx[static_cast<size_t>(i)] = i >> 1;
    else idx[static_cast<size_t>(i)] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * scale)), d.in - 1);
  }
  return idx;
}

// PyTorch's linear taps: area_pixel_compute_scale and _source_index in the op math type A.
template <class A>
void linear_taps(const DimPlan& d, bool align_corners, std::vector<int64_t>& i0, std::vector<int64_t>& i1,
                 std::vector<double>& l0, std::vector<double>& l1) {
  const A scale = align_corners ? (d.out > 1 ? static_cast<A>(d.in - 1) / static_cast<A>(d.out - 1) : A(0)) : scale_value<A>(d);
  for (int64_t i = 0; i < d.out; ++i) {
    A src = align_corners ? scale * static_cast<A>(i) : scale * (static_cast<A>(i) + A(0.5)) - A(0.5);
    if (!align_corners && src < 0) src = 0;
    const int64_t lo = static_cast<int64_t>(src);
    const A lambda1 = src - static_cast<A>(lo), lambda0 = A(1) - lambda1;
    i0.push_back(lo);
    i1.push_back(lo + (lo < d.in - 1 ? 1 : 0));
    l0.push_back(static_cast<double>(lambda0));
    l1.push_back(static_cast<double>(lambda1));
  }
}

// x resized along `dim` by PyTorch's linear taps: x[i0] l0 + x[i1] l1. A dim whose size does
// not change is left as it is, whatever the scale factor (PyTorch's kernels do the same).
Tensor linear_along(const Tensor& x, int64_t dim, const DimPlan& d, bool align_corners) {
  if (d.in == d.out) return x;
  std::vector<int64_t> i0, i1;
  std::vector<double> l0, l1;
  if (x.dtype() == DType::Float64) linear_taps<double>(d, align_corners, i0, i1, l0, l1);
  else linear_taps<float>(d, align_corners, i0, i1, l0, l1);
  const TensorOptions index = TensorOptions().dtype(DType::Int64).device(x.device());
  const TensorOptions weight = TensorOptions().dtype(x.dtype()).device(x.device());
  Shape along(static_cast<size_t>(x.dim()), 1);
  along[static_cast<size_t>(dim)] = d.out;
  const Tensor w0 = tensor(l0, weight).view(along), w1 = tensor(l1, weight).view(along);
  return add(mul(index_select(x, dim, tensor(i0, index)), w0), mul(index_select(x, dim, tensor(i1, index)), w1));
}

std::vector<DimPlan> plan(const Tensor& input, const InterpolateFuncOptions& o) {
  const int64_t spatial = input.dim() - 2;
  std::vector<int64_t> in_sizes;
  for (int64_t d = 2; d < input.dim(); ++d) in_sizes.push_back(input.size(d));
  if (!o.size() && !o.scale_factor()) throw ValueError(p() + "either size or scale_factor should be defined");
  if (o.size() && o.scale_factor()) throw ValueError(p() + "only one of size or scale_factor should be defined");
  std::vector<DimPlan> dims(static_cast<size_t>(spatial));
  for (size_t d = 0; d < dims.size(); ++d) dims[d].in = in_sizes[d];
  if (o.size()) {
    std::vector<int64_t> size = *o.size();
    if (size.size() == 1) size.assign(static_cast<size_t>(spatial), size[0]);
    if (static_cast<int64_t>(size.size()) != spatial)
      throw ValueError(p() + "Input and output must have the same number of spatial dimensions, but got input with spatial "
                             "dimensions of " + list_text(in_sizes) + " and output size of " + tuple_repr(*o.size()) +
                       ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.");
    for (size_t d = 0; d < dims.size(); ++d) dims[d].out = size[d];
  } else {
    std::vector<double> scale = *o.scale_factor();
    if (scale.size() == 1) scale.assign(static_cast<size_t>(spatial), scale[0]);
    if (static_cast<int64_t>(scale.size()) != spatial)
      throw ValueError(p() + "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                             "spatial dimensions of " + list_text(in_sizes) + " and scale_factor of " +
                       std::to_string(o.scale_factor()->size()) + " values.");
    for (size_t d = 0; d < dims.size(); ++d) {
      dims[d].out = static_cast<int64_t>(std::floor(static_cast<double>(dims[d].in) * scale[d]));
      if (!o.recompute_scale_factor().value_or(false)) dims[d].scale = scale[d];
    }
  }
  bool positive = true;
  for (const DimPlan& d : dims) positive &= d.in > 0 && d.out > 0;
  if (!positive) {
    const char* names[] = {"H", "W"};
    std::ostringstream in, out;
    for (size_t d = 0; d < dims.size(); ++d) {
      const char* name = dims.size() == 1 ? "W" : names[d];
      in << (d ? ", " : "") << name << ": " << dims[d].in;
      out << (d ? ", " : "") << name << ": " << dims[d].out;
    }
    throw ValueError(p() + "Input and output sizes should be greater than 0, but got input (" + in.str() + ") output (" +
                     out.str() + ")");
  }
  return dims;
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  const ops::PublicOp op("interpolate", {{input, "input"}});
  const InterpolateMode mode = o.mode();
  if (o.align_corners() && mode == InterpolateMode::Nearest)
    throw ValueError(p() + "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  const int64_t rank = input.dim();
  if (rank < 3 || rank > 4)
    throw NotImplementedError(p() + "Input Error: Only 3D and 4D input Tensors are supported (got " + std::to_string(rank) +
                              "D) for the modes: nearest | linear | bilinear");
  if (mode == InterpolateMode::Linear && rank != 3)
    throw NotImplementedError(p() + "Got " + std::to_string(rank) + "D input, but linear mode needs 3D input");
  if (mode == InterpolateMode::Bilinear && rank != 4)
    throw NotImplementedError(p() + "Got " + std::to_string(rank) + "D input, but bilinear mode needs 4D input");
  if (!is_floating_point(input.dtype()))
    throw DTypeError(p() + "expects a floating point input, got " + std::string(dtype_name(input.dtype())));
  const std::vector<DimPlan> dims = plan(input, o);
  if (mode == InterpolateMode::Nearest) {
    Tensor r = input;
    for (size_t d = 0; d < dims.size(); ++d)
      r = index_select(r, static_cast<int64_t>(d) + 2,
                       tensor(nearest_indices(dims[d]), TensorOptions().dtype(DType::Int64).device(input.device())));
    return r;
  }
  // Linear modes in float for the 16-bit types (PyTorch's op math), the last dim first.
  const DType compute = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor r = input.to(compute);
  const bool align = o.align_corners().value_or(false);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) r = linear_along(r, d + 2, dims[static_cast<size_t>(d)], align);
  return r.to(input.dtype());
}

}  // namespace functional

std::string detail::upsample_repr(const UpsampleOptions& options) {
  std::string s;
  if (options.size()) {
    s = "size=" + (options.size()->size() == 1 ? std::to_string((*options.size())[0]) : functional::tuple_repr(*options.size()));
  } else if (options.scale_factor()) {
    const std::vector<double>& f = *options.scale_factor();
    if (f.size() == 1) {
      s = "scale_factor=" + detail::python_float(f[0]);
    } else {
      s = "scale_factor=(";
      for (size_t i = 0; i < f.size(); ++i) s += (i ? ", " : "") + detail::python_float(f[i]);
      s += ")";
    }
  }
  const char* modes[] = {"nearest", "linear", "bilinear"};
  return s + ", mode=" + modes[static_cast<int>(options.mode())];
}

}  // namespace locus::nn
