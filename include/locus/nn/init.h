#pragma once
/// \file init.h
/// torch.nn.init (LibTorch's torch::nn::init): fills a tensor in place, without recording a
/// gradient, with random numbers of the tensor's own device's generator (manual_seed makes them
/// reproducible) or a fixed pattern, and returns it. Spelled as LibTorch:
/// `nn::init::kaiming_uniform_(fc->weight, 0, nn::init::kFanIn, nn::init::kReLU);`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string_view>
#include <utility>

#include "locus/scalar.h"
#include "locus/tensor.h"

namespace locus::nn::init {

/// Which fan scales a kaiming init: the inputs (kept variance forward) or the outputs (backward).
/// LibTorch's torch::kFanIn / torch::kFanOut are the constants kFanIn / kFanOut below.
enum class FanMode { FanIn, FanOut };

/// The nonlinearity a gain is for (PyTorch's strings 'linear', 'conv1d', ..., 'selu').
enum class Nonlinearity {
  Linear,
  Conv1D,
  Conv2D,
  Conv3D,
  ConvTranspose1D,
  ConvTranspose2D,
  ConvTranspose3D,
  Sigmoid,
  Tanh,
  ReLU,
  LeakyReLU,
  SELU
};

/// LibTorch's spellings (torch::kFanIn, torch::kReLU, ...), here in nn::init.
inline constexpr FanMode kFanIn = FanMode::FanIn;
/// LibTorch's torch::kFanOut.
inline constexpr FanMode kFanOut = FanMode::FanOut;
/// LibTorch's torch::kLinear.
inline constexpr Nonlinearity kLinear = Nonlinearity::Linear;
/// LibTorch's torch::kConv1D.
inline constexpr Nonlinearity kConv1D = Nonlinearity::Conv1D;
/// LibTorch's torch::kConv2D.
inline constexpr Nonlinearity kConv2D = Nonlinearity::Conv2D;
/// LibTorch's torch::kConv3D.
inline constexpr Nonlinearity kConv3D = Nonlinearity::Conv3D;
/// LibTorch's torch::kConvTranspose1D.
inline constexpr Nonlinearity kConvTranspose1D = Nonlinearity::ConvTranspose1D;
/// LibTorch's torch::kConvTranspose2D.
inline constexpr Nonlinearity kConvTranspose2D = Nonlinearity::ConvTranspose2D;
/// LibTorch's torch::kConvTranspose3D.
inline constexpr Nonlinearity kConvTranspose3D = Nonlinearity::ConvTranspose3D;
/// LibTorch's torch::kSigmoid.
inline constexpr Nonlinearity kSigmoid = Nonlinearity::Sigmoid;
/// LibTorch's torch::kTanh.
inline constexpr Nonlinearity kTanh = Nonlinearity::Tanh;
/// LibTorch's torch::kReLU.
inline constexpr Nonlinearity kReLU = Nonlinearity::ReLU;
/// LibTorch's torch::kLeakyReLU.
inline constexpr Nonlinearity kLeakyReLU = Nonlinearity::LeakyReLU;
/// Python's 'selu' (LibTorch 1.13 has no constant for it).
inline constexpr Nonlinearity kSELU = Nonlinearity::SELU;

/// The recommended gain for a nonlinearity: 1 for linear, the convolutions and sigmoid, 5/3 for
/// tanh, sqrt(2) for relu, sqrt(2 / (1 + param^2)) for leaky_relu (param: its negative slope),
/// 3/4 for selu.
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
/// The same by PyTorch's name ("leaky_relu"); ValueError "Unsupported nonlinearity ..." otherwise.
double calculate_gain(std::string_view nonlinearity, double param = 0.01);

/// {fan_in, fan_out} of a weight [out, in, k1, k2, ...]: in and out times the receptive field
/// k1 * k2 * .... ValueError for fewer than 2 dims, as PyTorch.
std::pair<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

/// Uniform on [low, high).
Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
/// Normal with this mean and standard deviation.
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
/// Normal(mean, std) restricted to [a, b] (PyTorch's inverse-CDF method: exact, no redraws).
Tensor trunc_normal_(Tensor tensor, double mean = 0, double std = 1, double a = -2, double b = 2);
/// Every element `value`.
Tensor constant_(Tensor tensor, const Scalar& value);
/// Every element 0.
Tensor zeros_(Tensor tensor);
/// Every element 1.
Tensor ones_(Tensor tensor);
/// The identity matrix (a 2-D tensor only: ValueError otherwise).
Tensor eye_(Tensor tensor);
/// Glorot: uniform in +-gain sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
/// Glorot: normal with std gain sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
/// He: uniform in +-sqrt(3) gain / sqrt(fan), gain = calculate_gain(nonlinearity, a).
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanMode mode = kFanIn, Nonlinearity nonlinearity = kLeakyReLU);
/// He: normal with std gain / sqrt(fan), gain = calculate_gain(nonlinearity, a).
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanMode mode = kFanIn, Nonlinearity nonlinearity = kLeakyReLU);
/// A (semi-)orthogonal matrix times gain, from the QR decomposition of a normal matrix, for a
/// tensor of at least 2 dims seen as [size(0), the rest]. ValueError for fewer dims.
Tensor orthogonal_(Tensor tensor, double gain = 1.0);

}  // namespace locus::nn::init

LOCUS_API_END
