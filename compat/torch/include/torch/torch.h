#pragma once
/// \file torch/torch.h
/// Locus's LibTorch compatibility header: a program written against LibTorch's C++ frontend
/// builds against Locus unchanged. `torch::`, `at::` and `c10::` name Locus (`torch::Tensor` is
/// locus::Tensor, `torch::nn::Linear` is locus::nn::Linear), and LibTorch's macros
/// (TORCH_MODULE, TORCH_CHECK, AT_ASSERT, ...) are defined over Locus's. Opt-in: it is found only
/// through the compatibility package (find_package(Torch) with Locus's TorchConfig.cmake on
/// CMAKE_PREFIX_PATH), never beside a real LibTorch. What maps and what differs: docs/libtorch.md.

// LibTorch's torch.h brings the standard headers below along, and its users rely on that
// (`std::isnan`, `std::cout`, `std::tie` without their own includes).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <locus/locus.h>

/// LibTorch's frontend namespace: all of Locus.
namespace torch {
using namespace ::locus;
using std::nullopt;
using std::optional;
}  // namespace torch

/// LibTorch's top-level constants that several options take (torch::kReLU in init gains, in
/// RNNOptions::nonlinearity and in the transformer layers' activation; torch::kLinear in init
/// gains and in interpolate's mode): each is one value of its own type, converting to every option
/// type that names it, as LibTorch's torch::enumtype structs do through its variants. Locus's own
/// spellings sit in the namespaces of their options (nn::init::kReLU, nn::kReLU, locus::kLinear).
namespace torch {
namespace enumtype {
/// torch::kReLU's type.
struct kReLU {
  constexpr operator ::locus::nn::init::Nonlinearity() const noexcept { return ::locus::nn::init::Nonlinearity::ReLU; }
  operator ::locus::nn::RNNNonlinearity() const { return ::locus::nn::RNNNonlinearity(::locus::nn::TransformerActivation::ReLU); }
  operator ::locus::nn::TransformerActivation() const { return ::locus::nn::TransformerActivation::ReLU; }
};
/// torch::kTanh's type.
struct kTanh {
  constexpr operator ::locus::nn::init::Nonlinearity() const noexcept { return ::locus::nn::init::Nonlinearity::Tanh; }
  operator ::locus::nn::RNNNonlinearity() const { return ::locus::nn::RNNNonlinearity(::locus::nn::RNNNonlinearity::Tanh); }
};
/// torch::kGELU's type.
struct kGELU {
  operator ::locus::nn::TransformerActivation() const { return ::locus::nn::TransformerActivation::GELU; }
};
/// torch::kLinear's type.
struct kLinear {
  constexpr operator ::locus::nn::init::Nonlinearity() const noexcept { return ::locus::nn::init::Nonlinearity::Linear; }
  constexpr operator ::locus::nn::functional::InterpolateMode() const noexcept {
    return ::locus::nn::functional::InterpolateMode::Linear;
  }
};
}  // namespace enumtype
/// LibTorch's torch::kReLU.
inline constexpr enumtype::kReLU kReLU{};
/// LibTorch's torch::kTanh.
inline constexpr enumtype::kTanh kTanh{};
/// LibTorch's torch::kGELU.
inline constexpr enumtype::kGELU kGELU{};
/// LibTorch's torch::kLinear.
inline constexpr enumtype::kLinear kLinear{};
/// LibTorch's torch::kFanIn, torch::kFanOut and the init gains' other nonlinearities.
using ::locus::nn::init::kConv1D;
using ::locus::nn::init::kConv2D;
using ::locus::nn::init::kConv3D;
using ::locus::nn::init::kConvTranspose1D;
using ::locus::nn::init::kConvTranspose2D;
using ::locus::nn::init::kConvTranspose3D;
using ::locus::nn::init::kFanIn;
using ::locus::nn::init::kFanOut;
using ::locus::nn::init::kLeakyReLU;
using ::locus::nn::init::kSigmoid;
}  // namespace torch

/// ATen's namespace: all of Locus (at::Tensor, at::kFloat, at::Reduction::Sum, ...).
namespace at {
using namespace ::locus;
using std::nullopt;
using std::optional;
}  // namespace at

/// c10's namespace: all of Locus (c10::Device, c10::str, c10::Error, c10::IntArrayRef, ...).
namespace c10 {
using namespace ::locus;
using std::make_optional;
using std::nullopt;
using std::optional;
}  // namespace c10

namespace locus::detail {
/// TORCH_CHECK's message without one of its own: LibTorch's wording.
inline std::string torch_check_message(const char* condition) {
  return std::string("Expected ") + condition + " to be true, but got false.";
}
/// TORCH_CHECK's message: the arguments printed one after the other.
template <class... Args>
std::string torch_check_message(const char* /*condition*/, const Args&... args) {
  return ::locus::str(args...);
}
}  // namespace locus::detail

/// LibTorch's TORCH_MODULE(Name): the handle class `Name` of `NameImpl`.
#define TORCH_MODULE(Name) LOCUS_MODULE(Name)
/// LibTorch's TORCH_ARG(T, name): an options field with its setter and getter.
#define TORCH_ARG(T, name) LOCUS_ARG(T, name)
/// LibTorch's TORCH_CHECK(condition, message...): c10::Error (locus::Error) with the message when
/// the condition is false.
#define TORCH_CHECK(condition, ...)                                                                     \
  do {                                                                                                  \
    if (!(condition))                                                                                   \
      throw ::locus::Error(::locus::detail::torch_check_message(#condition __VA_OPT__(, ) __VA_ARGS__)); \
  } while (false)
/// LibTorch's TORCH_INTERNAL_ASSERT: as TORCH_CHECK.
#define TORCH_INTERNAL_ASSERT(condition, ...) TORCH_CHECK(condition __VA_OPT__(, ) __VA_ARGS__)
/// LibTorch's AT_ASSERT: as TORCH_CHECK.
#define AT_ASSERT(condition, ...) TORCH_CHECK(condition __VA_OPT__(, ) __VA_ARGS__)
/// LibTorch's TORCH_WARN(message...): the message on stderr, prefixed "Warning: ".
#define TORCH_WARN(...) (std::cerr << "Warning: " << ::locus::str(__VA_ARGS__) << std::endl)
