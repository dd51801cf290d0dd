#pragma once
/// \file layers.h
/// The layers of torch.nn that the tutorials use, each an `...Impl` module class with its
/// handle (`nn::Linear` shares an `nn::LinearImpl`; module_holder.h).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "locus/arg.h"
#include "locus/elementwise.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/options_module.h"

namespace locus::nn {

/// y = x W^T + b, W of shape [out, in], initialised like PyTorch (uniform in +-1/sqrt(in)).
class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  /// Registers weight (and bias) of the configured shapes, uninitialised.
  void reset() override;
  /// Draws weight and bias as PyTorch's reset_parameters does.
  void reset_parameters();
  Tensor weight, bias;

 private:
  int64_t in_features_, out_features_;
  bool has_bias_;
};
LOCUS_MODULE(Linear);

/// GELU's options: `GELUOptions().approximate("tanh")`.
struct GELUOptions {
  /// "none": the exact (erf) form; "tanh": the tanh approximation. Anything else is a ValueError
  /// when the module runs, as in PyTorch.
  LOCUS_ARG(std::string, approximate) = "none";
};

/// x * Phi(x): the exact (erf) GELU, or its tanh approximation with `approximate("tanh")`.
class GELUImpl : public OptionsModule<GELUImpl, GELUOptions> {
 public:
  using OptionsModule::OptionsModule;
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override { return "approximate='" + options.approximate() + "'"; }
};
LOCUS_MODULE(GELU);

/// 1 / (1 + exp(-x)).
class SigmoidImpl : public UnaryModule<SigmoidImpl, &locus::sigmoid> {};
LOCUS_MODULE(Sigmoid);

/// tanh(x).
class TanhImpl : public UnaryModule<TanhImpl, &locus::tanh> {};
LOCUS_MODULE(Tanh);

/// Zeroes each element with probability p in training mode and scales the rest by 1/(1-p);
/// the identity in eval mode. ValueError unless 0 <= p < 1.
class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  void reset() override {}
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;
  double p() const noexcept { return p_; }

 private:
  double p_;
};
LOCUS_MODULE(Dropout);

/// Flattens dims start_dim..end_dim (default: all but the batch dim).
class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  void reset() override {}
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1) : start_(start_dim), end_(end_dim) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;

 private:
  int64_t start_, end_;
};
LOCUS_MODULE(Flatten);

/// Returns its input unchanged (a placeholder where a layer is optional).
class IdentityImpl : public StatelessModule<IdentityImpl> {
 public:
  /// `x` itself.
  Tensor forward(const Tensor& x) override { return x; }
};
LOCUS_MODULE(Identity);

/// Splits dim `dim` into `sizes` (one of which may be -1, inferred), as PyTorch's
/// nn.Unflatten(dim, unflattened_size): `nn::Unflatten(1, {2, 5})` maps [N, 10] to [N, 2, 5].
/// IndexError for a dim out of range; ShapeError when the sizes do not multiply to the dim's
/// size; ValueError for more than one -1 or a size below -1.
class UnflattenImpl : public Cloneable<UnflattenImpl> {
 public:
  void reset() override {}
  /// Splits dim `dim` (negative counts from the end) into `sizes`.
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes);
  /// `x` with dim `dim` replaced by `sizes` (a view where reshape gives one).
  Tensor forward(const Tensor& x) override;
  /// PyTorch's "dim=1, unflattened_size=(2, 5)".
  std::string extra_repr() const override;

 private:
  int64_t dim_;
  std::vector<int64_t> sizes_;
};

/// The handle of UnflattenImpl, written out so that the sizes can be a braced list:
/// `nn::Unflatten(1, {2, 5})`.
class Unflatten : public ModuleHolder<UnflattenImpl> {
 public:
  using ModuleHolder<UnflattenImpl>::ModuleHolder;
  /// Splits dim `dim` into `sizes`.
  Unflatten(int64_t dim, std::vector<int64_t> sizes)
      : ModuleHolder<UnflattenImpl>(std::make_shared<UnflattenImpl>(dim, std::move(sizes))) {}
  LOCUS_HANDLE_TO_METHODS(Unflatten)
};

/// Runs its modules in order; they are named "0", "1", ... as in PyTorch.
class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  SequentialImpl(std::initializer_list<AnyModule> modules);
  explicit SequentialImpl(const std::vector<AnyModule>& modules);
  Tensor forward(const Tensor& x) override;
  /// Appends a module, named by its position.
  void push_back(const AnyModule& module);
  /// The i-th module; IndexError past the end.
  std::shared_ptr<Module> operator[](size_t i) const;
  /// A Sequential of clones of its modules.
  std::shared_ptr<Module> clone(std::optional<Device> device = std::nullopt) const override;
  size_t size() const noexcept { return modules_.size(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

/// The handle of SequentialImpl, built from handles as PyTorch's nn.Sequential(...):
/// `nn::Sequential{nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10)}`.
class Sequential : public ModuleSequenceHolder<SequentialImpl> {
 public:
  using ModuleSequenceHolder<SequentialImpl>::ModuleSequenceHolder;
  /// From modules given as arguments: `nn::Sequential(nn::Linear(4, 3), nn::ReLU())`.
  template <class... M>
    requires(sizeof...(M) >= 2 && (std::is_convertible_v<M, AnyModule> && ...))
  explicit Sequential(M&&... modules) : ModuleSequenceHolder<SequentialImpl>({AnyModule(std::forward<M>(modules))...}) {}
  LOCUS_HANDLE_TO_METHODS(Sequential)
};

}  // namespace locus::nn

LOCUS_API_END
