// nn::Conv1d, nn::Conv2d, nn::ConvTranspose2d: parameters, PyTorch's initialisation and repr,
// and padding_mode (the input padded by F::pad before a convolution without padding).

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/conv.h"
#include "locus/nn/functional/padding.h"
#include "locus/ops.h"
#include "src/nn/conv_geometry.h"

namespace locus::nn {
namespace {

using functional::int_or_tuple_repr;
using functional::tuple_repr;

// The constructor's checks, as PyTorch's _ConvNd.__init__.
void check_layer(const char* layer, int64_t in, int64_t out, int64_t groups, const std::vector<int64_t>& kernel,
                 const std::vector<int64_t>& stride, bool same) {
  const std::string p = std::string(layer) + ": ";
  if (in <= 0 || out <= 0)
    throw ValueError(p + "in_channels and out_channels must be positive, got " + std::to_string(in) + " and " + std::to_string(out));
  if (groups <= 0) throw ValueError(p + "groups must be a positive integer");
  if (in % groups != 0) throw ValueError(p + "in_channels must be divisible by groups");
  if (out % groups != 0) throw ValueError(p + "out_channels must be divisible by groups");
  for (int64_t k : kernel)
    if (k <= 0) throw ValueError(p + "kernel_size must be positive, got " + tuple_repr(kernel));
  if (same)
    for (int64_t s : stride)
      if (s != 1) throw ValueError(p + "padding='same' is not supported for strided convolutions");
}

// PyTorch's reset_parameters: kaiming_uniform_(a = sqrt(5)) of the weight is uniform in
// +-1/sqrt(fan_in), and the bias uses the same bound.
void draw_uniform(Tensor& weight, Tensor& bias, int64_t fan_in) {
  NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  weight.copy_(sub(mul(rand(weight.shape()), 2 * bound), bound));
  if (bias.defined()) bias.copy_(sub(mul(rand(bias.shape()), 2 * bound), bound));
}

std::string mode_name(functional::PadMode m) {
  switch (m) {
    case functional::PadMode::Constant: return "zeros";
    case functional::PadMode::Reflect: return "reflect";
    case functional::PadMode::Replicate: return "replicate";
    case functional::PadMode::Circular: return "circular";
  }
  return "zeros";
}

// PyTorch's _ConvNd.extra_repr.
template <class Options>
std::string conv_repr(const Options& o, bool has_bias, const std::string& padding, bool padding_is_default,
                      const std::vector<int64_t>& output_padding) {
  std::string s = std::to_string(o.in_channels()) + ", " + std::to_string(o.out_channels()) +
                  ", kernel_size=" + tuple_repr(o.kernel_size().vec()) + ", stride=" + tuple_repr(o.stride().vec());
  if (!padding_is_default) s += ", padding=" + padding;
  const std::vector<int64_t> dilation = o.dilation().vec();
  const auto all_equal = [](const std::vector<int64_t>& v, int64_t value) {
    return std::all_of(v.begin(), v.end(), [value](int64_t e) { return e == value; });
  };
  if (!all_equal(dilation, 1)) s += ", dilation=" + tuple_repr(dilation);
  if (!all_equal(output_padding, 0)) s += ", output_padding=" + tuple_repr(output_padding);
  if (o.groups() != 1) s += ", groups=" + std::to_string(o.groups());
  if (!has_bias) s += ", bias=False";
  if (o.padding_mode() != kZeros) s += ", padding_mode=" + mode_name(o.padding_mode());
  return s;
}

template <size_t D>
std::string padding_text(const ConvPadding<D>& p) {
  if (p.is_same()) return "same";
  if (p.is_valid()) return "valid";
  return tuple_repr(p.sizes().vec());
}

template <size_t D>
bool padding_is_default(const ConvPadding<D>& p) {
  if (p.is_same()) return false;
  const std::vector<int64_t> v = p.sizes().vec();
  return v == std::vector<int64_t>(D, 0);
}

// A convolution layer's forward: with padding_mode other than zeros, the input is padded by
// F::pad first (PyTorch's _reversed_padding_repeated_twice; for 'same' the odd extra on the
// right) and the convolution runs without padding.
template <size_t D, class Options, class Conv>
Tensor conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const Options& o, Conv&& conv) {
  typename functional::ConvFuncOptions<D> f;
  f.bias(bias).stride(o.stride()).dilation(o.dilation()).groups(o.groups());
  if (o.padding_mode() == kZeros) return conv(input, weight, f.padding(o.padding()));
  std::vector<int64_t> pads;  // last dim first
  for (int64_t i = static_cast<int64_t>(D) - 1; i >= 0; --i) {
    const size_t k = static_cast<size_t>(i);
    if (o.padding().is_same()) {
      const int64_t total = o.dilation()[k] * (o.kernel_size()[k] - 1);
      pads.push_back(total / 2);
      pads.push_back(total - total / 2);
    } else {
      pads.push_back(o.padding().sizes()[k]);
      pads.push_back(o.padding().sizes()[k]);
    }
  }
  const Tensor padded = functional::pad(input, functional::PadFuncOptions(pads).mode(o.padding_mode()));
  return conv(padded, weight, f.padding(0));
}

template <size_t D>
int64_t kernel_elements(const ExpandingArray<D>& k) {
  int64_t n = 1;
  for (size_t i = 0; i < D; ++i) n *= k[i];
  return n;
}

}  // namespace

Conv1dImpl::Conv1dImpl(const Conv1dOptions& options_) : options(options_) {
  check_layer("Conv1d", options.in_channels(), options.out_channels(), options.groups(), options.kernel_size().vec(),
              options.stride().vec(), options.padding().is_same());
  reset();
  reset_parameters();
}

void Conv1dImpl::reset() {
  weight = register_parameter("weight", empty({options.out_channels(), options.in_channels() / options.groups(),
                                               options.kernel_size()[0]}));
  bias = options.bias() ? register_parameter("bias", empty({options.out_channels()})) : Tensor();
}

void Conv1dImpl::reset_parameters() {
  draw_uniform(weight, bias, options.in_channels() / options.groups() * kernel_elements(options.kernel_size()));
}

Tensor Conv1dImpl::forward(const Tensor& input) {
  return conv_forward<1>(input, weight, bias, options, [](const Tensor& x, const Tensor& w, const auto& f) {
    return functional::conv1d(x, w, f);
  });
}

std::string Conv1dImpl::extra_repr() const {
  return conv_repr(options, bias.defined(), padding_text(options.padding()), padding_is_default(options.padding()), {});
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options_) : options(options_) {
  check_layer("Conv2d", options.in_channels(), options.out_channels(), options.groups(), options.kernel_size().vec(),
              options.stride().vec(), options.padding().is_same());
  reset();
  reset_parameters();
}

void Conv2dImpl::reset() {
  weight = register_parameter("weight", empty({options.out_channels(), options.in_channels() / options.groups(),
                                               options.kernel_size()[0], options.kernel_size()[1]}));
  bias = options.bias() ? register_parameter("bias", empty({options.out_channels()})) : Tensor();
}

void Conv2dImpl::reset_parameters() {
  draw_uniform(weight, bias, options.in_channels() / options.groups() * kernel_elements(options.kernel_size()));
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return conv_forward<2>(input, weight, bias, options, [](const Tensor& x, const Tensor& w, const auto& f) {
    return functional::conv2d(x, w, f);
  });
}

std::string Conv2dImpl::extra_repr() const {
  return conv_repr(options, bias.defined(), padding_text(options.padding()), padding_is_default(options.padding()), {});
}

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options_) : options(options_) {
  check_layer("ConvTranspose2d", options.in_channels(), options.out_channels(), options.groups(),
              options.kernel_size().vec(), options.stride().vec(), false);
  if (options.padding_mode() != kZeros)
    throw ValueError("ConvTranspose2d: only \"zeros\" padding mode is supported for ConvTranspose2d");
  reset();
  reset_parameters();
}

void ConvTranspose2dImpl::reset() {
  weight = register_parameter("weight", empty({options.in_channels(), options.out_channels() / options.groups(),
                                               options.kernel_size()[0], options.kernel_size()[1]}));
  bias = options.bias() ? register_parameter("bias", empty({options.out_channels()})) : Tensor();
}

void ConvTranspose2dImpl::reset_parameters() {
  // PyTorch computes the fan-in from weight dim 1 (out_channels / groups) for transposed layers.
  draw_uniform(weight, bias, options.out_channels() / options.groups() * kernel_elements(options.kernel_size()));
}

Tensor ConvTranspose2dImpl::forward(const Tensor& input) {
  return functional::conv_transpose2d(input, weight,
                                      functional::ConvTranspose2dFuncOptions()
                                          .bias(bias)
                                          .stride(options.stride())
                                          .padding(options.padding())
                                          .output_padding(options.output_padding())
                                          .groups(options.groups())
                                          .dilation(options.dilation()));
}

Tensor ConvTranspose2dImpl::forward(const Tensor& input, const std::vector<int64_t>& output_size) {
  // PyTorch's _output_padding: the sizes may carry the batch and channel dims in front.
  if (output_size.size() != 2 && output_size.size() != static_cast<size_t>(input.dim()))
    throw ValueError("ConvTranspose2d: output_size must have 2 or " + std::to_string(input.dim()) + " elements (got " +
                     std::to_string(output_size.size()) + ")");
  if (input.dim() != 3 && input.dim() != 4)
    throw ShapeError("ConvTranspose2d: expected a 3-D or 4-D input, got " + std::to_string(input.dim()) + "-D");
  std::vector<int64_t> extra(2);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = input.size(input.dim() - 2 + static_cast<int64_t>(i));
    const int64_t smallest = (in - 1) * options.stride()[i] - 2 * options.padding()[i] +
                             options.dilation()[i] * (options.kernel_size()[i] - 1) + 1;
    const int64_t want = output_size[output_size.size() - 2 + i];
    if (want < smallest || want >= smallest + options.stride()[i])
      throw ValueError("ConvTranspose2d: requested an output size of " + tuple_repr({output_size.end()[-2], output_size.end()[-1]}) +
                       ", but valid sizes range from (" + std::to_string(smallest) + ") to (" +
                       std::to_string(smallest + options.stride()[i] - 1) + ") in dim " + std::to_string(i) +
                       " (for an input of " + std::to_string(in) + ")");
    extra[i] = want - smallest;
  }
  return functional::conv_transpose2d(input, weight,
                                      functional::ConvTranspose2dFuncOptions()
                                          .bias(bias)
                                          .stride(options.stride())
                                          .padding(options.padding())
                                          .output_padding(extra)
                                          .groups(options.groups())
                                          .dilation(options.dilation()));
}

std::string ConvTranspose2dImpl::extra_repr() const {
  const std::vector<int64_t> padding = options.padding().vec();
  return conv_repr(options, bias.defined(), tuple_repr(padding), padding == std::vector<int64_t>(2, 0),
                   options.output_padding().vec());
}

}  // namespace locus::nn
