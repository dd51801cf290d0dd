// nn::Conv1d, nn::Conv2d, nn::ConvTranspose2d, written once over the number of spatial dims
// (ConvLayerBase, ConvNdImpl, ConvTransposeNdImpl): parameters, PyTorch's initialisation and
// repr, and padding_mode (the input padded by F::pad before a convolution without padding).

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

template <class Options>
constexpr bool is_transposed = false;
template <size_t D>
constexpr bool is_transposed<ConvTransposeOptions<D>> = true;

// The layer's name in its errors: "Conv2d", "ConvTranspose2d".
template <size_t D, class Options>
std::string layer_name() {
  return std::string(is_transposed<Options> ? "ConvTranspose" : "Conv") + std::to_string(D) + "d";
}

// F::conv1d or F::conv2d, as D says.
template <size_t D>
Tensor conv_function(const Tensor& input, const Tensor& weight, const functional::ConvFuncOptions<D>& f) {
  if constexpr (D == 1) return functional::conv1d(input, weight, f);
  else return functional::conv2d(input, weight, f);
}

// F::conv_transpose2d with the layer's options and `output_padding`.
template <size_t D>
Tensor conv_transpose(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvTransposeOptions<D>& o,
                      const ExpandingArray<D>& output_padding) {
  static_assert(D == 2, "F::conv_transpose2d is the only transposed convolution");
  return functional::conv_transpose2d(input, weight,
                                      functional::ConvTranspose2dFuncOptions()
                                          .bias(bias)
                                          .stride(o.stride())
                                          .dilation(o.dilation())
                                          .groups(o.groups())
                                          .padding(o.padding())
                                          .output_padding(output_padding));
}

}  // namespace

template <size_t D, class Derived, class Options>
ConvLayerBase<D, Derived, Options>::ConvLayerBase(const Options& options_) : options(options_) {
  const std::string name = layer_name<D, Options>();
  bool same = false;
  if constexpr (!is_transposed<Options>) same = options.padding().is_same();
  check_layer(name.c_str(), options.in_channels(), options.out_channels(), options.groups(), options.kernel_size().vec(),
              options.stride().vec(), same);
  if (is_transposed<Options> && options.padding_mode() != kZeros)
    throw ValueError(name + ": only \"zeros\" padding mode is supported for " + name);
  reset();
  reset_parameters();
}

template <size_t D, class Derived, class Options>
void ConvLayerBase<D, Derived, Options>::reset() {
  // A transposed layer's weight maps output channels back to input ones: [C_in, C_out / groups, k...].
  const bool transposed = is_transposed<Options>;
  std::vector<int64_t> shape = {transposed ? options.in_channels() : options.out_channels(),
                                (transposed ? options.out_channels() : options.in_channels()) / options.groups()};
  for (size_t i = 0; i < D; ++i) shape.push_back(options.kernel_size()[i]);
  weight = this->register_parameter("weight", locus::empty(shape));
  bias = options.bias() ? this->register_parameter("bias", empty({options.out_channels()})) : Tensor();
}

template <size_t D, class Derived, class Options>
void ConvLayerBase<D, Derived, Options>::reset_parameters() {
  // The fan-in is the weight's dim 1 times the kernel: out_channels / groups for a transposed
  // layer, as PyTorch computes it.
  draw_uniform(weight, bias, weight.size(1) * kernel_elements(options.kernel_size()));
}

template <size_t D, class Derived, class Options>
std::string ConvLayerBase<D, Derived, Options>::extra_repr() const {
  if constexpr (is_transposed<Options>) {
    const std::vector<int64_t> padding = options.padding().vec();
    return conv_repr(options, bias.defined(), tuple_repr(padding), padding == std::vector<int64_t>(D, 0),
                     options.output_padding().vec());
  } else {
    return conv_repr(options, bias.defined(), padding_text(options.padding()), padding_is_default(options.padding()), {});
  }
}

template <size_t D, class Derived>
Tensor ConvNdImpl<D, Derived>::forward(const Tensor& input) {
  return conv_forward<D>(input, this->weight, this->bias, this->options, conv_function<D>);
}

template <size_t D, class Derived>
Tensor ConvTransposeNdImpl<D, Derived>::forward(const Tensor& input) {
  return conv_transpose<D>(input, this->weight, this->bias, this->options, this->options.output_padding());
}

template <size_t D, class Derived>
Tensor ConvTransposeNdImpl<D, Derived>::forward(const Tensor& input, const std::vector<int64_t>& output_size) {
  const ConvTransposeOptions<D>& o = this->options;
  const std::string name = layer_name<D, ConvTransposeOptions<D>>();
  const int64_t d = static_cast<int64_t>(D);
  // PyTorch's _output_padding: the sizes may carry the batch and channel dims in front.
  if (output_size.size() != D && output_size.size() != static_cast<size_t>(input.dim()))
    throw ValueError(name + ": output_size must have " + std::to_string(D) + " or " + std::to_string(input.dim()) +
                     " elements (got " + std::to_string(output_size.size()) + ")");
  if (input.dim() != d + 1 && input.dim() != d + 2)
    throw ShapeError(name + ": expected a " + std::to_string(d + 1) + "-D or " + std::to_string(d + 2) +
                     "-D input, got " + std::to_string(input.dim()) + "-D");
  const std::vector<int64_t> wanted(output_size.end() - d, output_size.end());
  std::vector<int64_t> extra(D);
  for (size_t i = 0; i < D; ++i) {
    const int64_t in = input.size(input.dim() - d + static_cast<int64_t>(i));
    const int64_t smallest =
        (in - 1) * o.stride()[i] - 2 * o.padding()[i] + o.dilation()[i] * (o.kernel_size()[i] - 1) + 1;
    if (wanted[i] < smallest || wanted[i] >= smallest + o.stride()[i])
      throw ValueError(name + ": requested an output size of " + tuple_repr(wanted) + ", but valid sizes range from (" +
                       std::to_string(smallest) + ") to (" + std::to_string(smallest + o.stride()[i] - 1) +
                       ") in dim " + std::to_string(i) + " (for an input of " + std::to_string(in) + ")");
    extra[i] = wanted[i] - smallest;
  }
  return conv_transpose<D>(input, this->weight, this->bias, o, extra);
}

template class ConvLayerBase<1, Conv1dImpl, ConvOptions<1>>;
template class ConvLayerBase<2, Conv2dImpl, ConvOptions<2>>;
template class ConvLayerBase<2, ConvTranspose2dImpl, ConvTransposeOptions<2>>;
template class ConvNdImpl<1, Conv1dImpl>;
template class ConvNdImpl<2, Conv2dImpl>;
template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;

}  // namespace locus::nn
