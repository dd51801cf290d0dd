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
#include "locus/nn/cloneable.h"
#include "locus/nn/layers.h"
#include "locus/nn/module_holder.h"
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

// ---- modules ------------------------------------------------------------------------------

/// x for x > 0, else negative_slope * x.
class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  LeakyReLUOptions options;
};
LOCUS_MODULE(LeakyReLU);

/// x for x > 0, else alpha * (exp(x) - 1).
class ELUImpl : public Cloneable<ELUImpl> {
 public:
  explicit ELUImpl(const ELUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  ELUOptions options;
};
LOCUS_MODULE(ELU);

/// scale * elu(x, alpha) with the self-normalizing constants.
class SELUImpl : public Cloneable<SELUImpl> {
 public:
  explicit SELUImpl(const SELUOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  SELUOptions options;
};
LOCUS_MODULE(SELU);

/// x * sigmoid(x).
class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
LOCUS_MODULE(SiLU);

/// x * tanh(softplus(x)).
class MishImpl : public Cloneable<MishImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
LOCUS_MODULE(Mish);

/// log(1 + exp(beta x)) / beta, x above the threshold.
class SoftplusImpl : public Cloneable<SoftplusImpl> {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  SoftplusOptions options;
};
LOCUS_MODULE(Softplus);

/// x limited to [min_val, max_val]; ValueError at construction unless max_val > min_val (as
/// PyTorch's module; the function takes any bounds).
class HardtanhImpl : public Cloneable<HardtanhImpl> {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options_ = {});
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  HardtanhOptions options;
};
LOCUS_MODULE(Hardtanh);

/// min(max(x, 0), 6).
class ReLU6Impl : public Cloneable<ReLU6Impl> {
 public:
  explicit ReLU6Impl(const ReLU6Options& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  ReLU6Options options;
};
LOCUS_MODULE(ReLU6);

/// min(max(x + 3, 0), 6) / 6.
class HardsigmoidImpl : public Cloneable<HardsigmoidImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
LOCUS_MODULE(Hardsigmoid);

/// x * hardsigmoid(x).
class HardswishImpl : public Cloneable<HardswishImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
LOCUS_MODULE(Hardswish);

/// log(sigmoid(x)).
class LogSigmoidImpl : public Cloneable<LogSigmoidImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& x) override;
};
LOCUS_MODULE(LogSigmoid);

/// softmax along `dim`: `nn::Softmax(1)`.
class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(int64_t dim) : options(dim) {}
  explicit SoftmaxImpl(const SoftmaxOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  SoftmaxOptions options;
};
LOCUS_MODULE(Softmax);

/// log_softmax along `dim`: `nn::LogSoftmax(1)`.
class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : options(dim) {}
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  LogSoftmaxOptions options;
};
LOCUS_MODULE(LogSoftmax);

}  // namespace locus::nn

/// torch.nn.functional's activations: `namespace F = locus::nn::functional;`.
namespace locus::nn::functional {

/// relu's options (in place or not).
struct ReLUFuncOptions {
  /* implicit */ ReLUFuncOptions(bool inplace = false) : inplace_(inplace) {}
  /// Write into the input instead of a new tensor.
  LOCUS_ARG(bool, inplace);
};
/// The functions take the modules' options, under LibTorch's names.
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

LOCUS_API_END
