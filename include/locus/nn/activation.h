#pragma once
/// \file activation.h
/// The activation modules of torch.nn and their functional forms (torch.nn.functional), with
/// LibTorch's spellings: `nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))`,
/// `F::softplus(x, F::SoftplusFuncOptions().beta(2))` with `namespace F = locus::nn::functional;`.
/// Each runs one elementwise op of the op table (elementwise.h), so it works on every device,
/// refuses the dtypes PyTorch refuses and has PyTorch's gradient. Modules print as PyTorch's.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string>

#include "locus/arg.h"
#include "locus/elementwise.h"
#include "locus/nn/layers.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/options_module.h"
#include "locus/tensor.h"

namespace locus::nn {

// ---- options ------------------------------------------------------------------------------
// `inplace(true)` makes the module (or function) write into its input, which must then not
// require grad (the op path's in-place rule).

/// LeakyReLU's options.
struct LeakyReLUOptions {
  /// The slope for x <= 0.
  LOCUS_ARG(double, negative_slope) = 1e-2;
  /// Write into the input instead of a new tensor.
  LOCUS_ARG(bool, inplace) = false;
};

/// ELU's options.
struct ELUOptions {
  /// The value ELU tends to for x -> -inf, negated.
  LOCUS_ARG(double, alpha) = 1.0;
  /// Write into the input instead of a new tensor.
  LOCUS_ARG(bool, inplace) = false;
};

/// SELU's options (its constants are fixed).
struct SELUOptions {
  /// `SELUOptions(true)` is in place, as LibTorch's.
  /* implicit */ SELUOptions(bool inplace = false) : inplace_(inplace) {}
  /// Write into the input instead of a new tensor.
  LOCUS_ARG(bool, inplace);
};

/// Softplus's options.
struct SoftplusOptions {
  /// The sharpness: log(1 + exp(beta x)) / beta.
  LOCUS_ARG(double, beta) = 1.0;
  /// Above beta x > threshold the result is x itself (no overflow, as PyTorch).
  LOCUS_ARG(double, threshold) = 20.0;
};

/// Hardtanh's options.
struct HardtanhOptions {
  /// The lower bound.
  LOCUS_ARG(double, min_val) = -1.0;
  /// The upper bound (the module wants it above min_val).
  LOCUS_ARG(double, max_val) = 1.0;
  /// Write into the input instead of a new tensor.
  LOCUS_ARG(bool, inplace) = false;
};

/// ReLU's options: `nn::ReLU(nn::ReLUOptions().inplace(true))`, or `nn::ReLU(true)`.
struct ReLUOptions {
  /// `ReLUOptions(true)` is in place, as LibTorch's.
  /* implicit */ ReLUOptions(bool inplace = false) : inplace_(inplace) {}
  /// Write into the input instead of a new tensor (recorded by autograd when the input is in
  /// the graph: Note [In-place ops in the graph]).
  LOCUS_ARG(bool, inplace);
};

/// ReLU6's options.
struct ReLU6Options {
  /// `ReLU6Options(true)` is in place, as LibTorch's.
  /* implicit */ ReLU6Options(bool inplace = false) : inplace_(inplace) {}
  /// Write into the input instead of a new tensor.
  LOCUS_ARG(bool, inplace);
};

/// Softmax's options: the dim it normalizes over (required, as in LibTorch).
struct SoftmaxOptions {
  /* implicit */ SoftmaxOptions(int64_t dim) : dim_(dim) {}
  /// The dim whose entries sum to 1 (negative counts from the end).
  LOCUS_ARG(int64_t, dim);
};

/// LogSoftmax's options: the dim it normalizes over.
struct LogSoftmaxOptions {
  /* implicit */ LogSoftmaxOptions(int64_t dim) : dim_(dim) {}
  /// The dim normalized over (negative counts from the end).
  LOCUS_ARG(int64_t, dim);
};

}  // namespace locus::nn

/// torch.nn.functional's activations: `namespace F = locus::nn::functional;`.
namespace locus::nn::functional {

/// The functions take the modules' options, under LibTorch's names.
using ReLUFuncOptions = ReLUOptions;
using GELUFuncOptions = GELUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ReLU6FuncOptions = ReLU6Options;

/// softmax's and log_softmax's options: the dim, and a dtype the input is converted to first
/// (PyTorch's `dtype=`, against overflow in 16-bit inputs).
struct SoftmaxFuncOptions {
  /* implicit */ SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  /// The dim normalized over (negative counts from the end).
  LOCUS_ARG(int64_t, dim);
  /// The dtype the input is converted to before the op (none: its own).
  LOCUS_ARG(std::optional<DType>, dtype) = std::nullopt;
};
/// log_softmax takes the same options.
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

/// max(x, 0): the input, when `inplace` (written into; it must not require grad), else a new
/// tensor. The same holds for every function below with an `inplace` option.
Tensor relu(Tensor input, const ReLUFuncOptions& options = {});
/// Exact or tanh-approximated GELU; ValueError for another `approximate`.
Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {});
/// x for x > 0, else negative_slope * x.
Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options = {});
/// x for x > 0, else alpha * (exp(x) - 1).
Tensor elu(Tensor input, const ELUFuncOptions& options = {});
/// PyTorch's selu constants times elu.
Tensor selu(Tensor input, const SELUFuncOptions& options = {});
/// x * sigmoid(x).
Tensor silu(const Tensor& input);
/// x * tanh(softplus(x)).
Tensor mish(const Tensor& input);
/// log(1 + exp(beta x)) / beta, x above the threshold.
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {});
/// Any bounds (min_val > max_val gives max_val everywhere, as PyTorch's function).
Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options = {});
/// hardtanh(x, 0, 6).
Tensor relu6(Tensor input, const ReLU6FuncOptions& options = {});
/// min(max(x + 3, 0), 6) / 6.
Tensor hardsigmoid(const Tensor& input);
/// x * hardsigmoid(x).
Tensor hardswish(const Tensor& input);
/// log(sigmoid(x)).
Tensor logsigmoid(const Tensor& input);
/// 1 / (1 + exp(-x)).
Tensor sigmoid(const Tensor& input);
/// tanh(x).
Tensor tanh(const Tensor& input);
/// softmax along options.dim(), in options.dtype() when given.
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
/// log_softmax along options.dim(), in options.dtype() when given.
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);

}  // namespace locus::nn::functional

namespace locus::nn {

// ---- modules ------------------------------------------------------------------------------
// Each is its function with the module's options and how it prints them (options_module.h).

namespace detail {
/// LeakyReLU's repr: PyTorch's "negative_slope=0.01" (", inplace=True" when in place).
std::string leaky_relu_repr(const LeakyReLUOptions& options);
/// ELU's repr: "alpha=1.0" (and inplace as LeakyReLU's).
std::string elu_repr(const ELUOptions& options);
/// SELU's repr: "inplace=True" when in place, else empty.
std::string selu_repr(const SELUOptions& options);
/// Softplus's repr: "beta=1, threshold=20" (whole values print as Python ints, as the defaults).
std::string softplus_repr(const SoftplusOptions& options);
/// Hardtanh's repr: "min_val=-1.0, max_val=1.0" (and inplace as LeakyReLU's).
std::string hardtanh_repr(const HardtanhOptions& options);
/// ReLU's repr: "inplace=True" when in place, else empty.
std::string relu_repr(const ReLUOptions& options);
/// ReLU6's repr: as SELU's.
std::string relu6_repr(const ReLU6Options& options);
}  // namespace detail

/// x for x > 0, else negative_slope * x.
class LeakyReLUImpl : public FunctionalModule<LeakyReLUImpl, LeakyReLUOptions, &functional::leaky_relu, nullptr, &detail::leaky_relu_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(LeakyReLU);

/// x for x > 0, else alpha * (exp(x) - 1).
class ELUImpl : public FunctionalModule<ELUImpl, ELUOptions, &functional::elu, nullptr, &detail::elu_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(ELU);

/// scale * elu(x, alpha) with the self-normalizing constants.
class SELUImpl : public FunctionalModule<SELUImpl, SELUOptions, &functional::selu, nullptr, &detail::selu_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(SELU);

/// x * sigmoid(x).
class SiLUImpl : public UnaryModule<SiLUImpl, &locus::silu> {};
LOCUS_MODULE(SiLU);

/// x * tanh(softplus(x)).
class MishImpl : public UnaryModule<MishImpl, &locus::mish> {};
LOCUS_MODULE(Mish);

/// log(1 + exp(beta x)) / beta, x above the threshold.
class SoftplusImpl : public FunctionalModule<SoftplusImpl, SoftplusOptions, &functional::softplus, nullptr, &detail::softplus_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(Softplus);

/// x limited to [min_val, max_val]; ValueError at construction unless max_val > min_val (as
/// PyTorch's module; the function takes any bounds).
class HardtanhImpl : public FunctionalModule<HardtanhImpl, HardtanhOptions, &functional::hardtanh, nullptr, &detail::hardtanh_repr> {
 public:
  /// A module with `options_`; checks the bounds.
  explicit HardtanhImpl(const HardtanhOptions& options_ = {});
};
LOCUS_MODULE(Hardtanh);

/// max(x, 0), in place when the options say so.
class ReLUImpl : public FunctionalModule<ReLUImpl, ReLUOptions, &functional::relu, nullptr, &detail::relu_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(ReLU);

/// min(max(x, 0), 6).
class ReLU6Impl : public FunctionalModule<ReLU6Impl, ReLU6Options, &functional::relu6, nullptr, &detail::relu6_repr> {
 public:
  using FunctionalModule::FunctionalModule;
};
LOCUS_MODULE(ReLU6);

/// min(max(x + 3, 0), 6) / 6.
class HardsigmoidImpl : public UnaryModule<HardsigmoidImpl, &locus::hardsigmoid> {};
LOCUS_MODULE(Hardsigmoid);

/// x * hardsigmoid(x).
class HardswishImpl : public UnaryModule<HardswishImpl, &locus::hardswish> {};
LOCUS_MODULE(Hardswish);

/// log(sigmoid(x)).
class LogSigmoidImpl : public UnaryModule<LogSigmoidImpl, &locus::logsigmoid> {};
LOCUS_MODULE(LogSigmoid);

/// What Softmax and LogSoftmax share: `Fn` of the input along options.dim(), printed as PyTorch
/// prints them ("dim=1").
template <class Derived, class Options, Tensor (*Fn)(const Tensor&, const functional::SoftmaxFuncOptions&)>
class SoftmaxFamilyModule : public OptionsModule<Derived, Options> {
 public:
  using OptionsModule<Derived, Options>::OptionsModule;
  /// `Fn` of `x` along the options' dim.
  Tensor forward(const Tensor& x) override { return Fn(x, this->options.dim()); }
  /// "dim=1".
  std::string extra_repr() const override { return "dim=" + std::to_string(this->options.dim()); }
};

/// softmax along `dim`: `nn::Softmax(1)`.
class SoftmaxImpl : public SoftmaxFamilyModule<SoftmaxImpl, SoftmaxOptions, &functional::softmax> {
 public:
  using SoftmaxFamilyModule::SoftmaxFamilyModule;
};
LOCUS_MODULE(Softmax);

/// log_softmax along `dim`: `nn::LogSoftmax(1)`.
class LogSoftmaxImpl : public SoftmaxFamilyModule<LogSoftmaxImpl, LogSoftmaxOptions, &functional::log_softmax> {
 public:
  using SoftmaxFamilyModule::SoftmaxFamilyModule;
};
LOCUS_MODULE(LogSoftmax);

}  // namespace locus::nn

LOCUS_API_END
