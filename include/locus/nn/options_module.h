#pragma once
/// \file options_module.h
/// The bases of the many small modules that are one options struct and one function: what they
/// share (holding the options, building from them, an empty reset(), a forward that calls the
/// function) is written once here, and each module class says only what is its own.
/// Note [Module and options bases] in docs/design.md.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <concepts>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "locus/nn/cloneable.h"
#include "locus/nn/module.h"
#include "locus/tensor.h"

namespace locus::nn {

/// A cloneable module with no parameters, buffers or submodules: reset() has nothing to build.
template <class Derived>
class StatelessModule : public Cloneable<Derived> {
 public:
  /// Nothing to (re)build.
  void reset() override {}
};

/// A stateless module configured by `Options`, held as the public member `options` as LibTorch's
/// modules hold theirs (`pool->options.stride()`). It is built from anything `Options` is built
/// from: `nn::MaxPool2d(2)`, `nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(1))`, or nothing
/// when `Options` has a default.
template <class Derived, class Options>
class OptionsModule : public StatelessModule<Derived> {
 public:
  /// A module with the options built from `args`.
  template <class... Args>
    requires std::constructible_from<Options, Args...>
  explicit OptionsModule(Args&&... args) : options(std::forward<Args>(args)...) {}
  /// The options the module was built with.
  Options options;
};

/// An OptionsModule whose forward is `Fn(input, options)`: `Fn` is the module's function in
/// torch.nn.functional (`&functional::max_pool2d` for nn::MaxPool2d). A module whose function
/// also has a form that returns the positions it picked names it as `FnWithIndices`
/// (`&functional::max_pool2d_with_indices`), which forward_with_indices calls. `Repr`, where
/// given, is how the module prints its options (its extra_repr, `std::string Repr(const Options&)`),
/// so that a module class is its base and its inherited constructors alone.
template <class Derived, class Options, auto Fn, auto FnWithIndices = nullptr, auto Repr = nullptr>
class FunctionalModule : public OptionsModule<Derived, Options> {
 public:
  using OptionsModule<Derived, Options>::OptionsModule;
  /// The module's function of `input` with its options.
  Tensor forward(const Tensor& input) override { return Fn(input, this->options); }
  /// `Repr(options)`; without a `Repr`, Module's (empty).
  std::string extra_repr() const override {
    if constexpr (std::is_null_pointer_v<decltype(Repr)>) return Module::extra_repr();
    else return Repr(this->options);
  }
  /// The values and their positions, as PyTorch's return_indices=True.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input)
    requires(!std::is_null_pointer_v<decltype(FnWithIndices)>)
  {
    return FnWithIndices(input, this->options);
  }
};

/// A stateless module without options whose forward is `Fn(input)` (`&locus::silu` for nn::SiLU).
template <class Derived, Tensor (*Fn)(const Tensor&)>
class UnaryModule : public StatelessModule<Derived> {
 public:
  /// The module's function of `input`.
  Tensor forward(const Tensor& input) override { return Fn(input); }
};

/// A loss module: `Options` fixed at construction and read back with options(), and a forward
/// that is the loss's function `Fn` with them: `Fn(input, target, options)`, or
/// `Fn(input1, input2, target, options)` for the losses of a pair of inputs.
template <class Options, auto Fn>
class LossModule : public Module {
 public:
  /// A loss with `options` (the defaults when none are given).
  explicit LossModule(Options options = {}) : options_(std::move(options)) {}
  /// The loss of `input` against `target`.
  Tensor forward(const Tensor& input, const Tensor& target)
    requires std::invocable<decltype(Fn), const Tensor&, const Tensor&, const Options&>
  {
    return Fn(input, target, options_);
  }
  /// The loss of the pair (`input1`, `input2`) against `target`.
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target)
    requires std::invocable<decltype(Fn), const Tensor&, const Tensor&, const Tensor&, const Options&>
  {
    return Fn(input1, input2, target, options_);
  }
  /// The options it was built with.
  const Options& options() const noexcept { return options_; }

 private:
  Options options_;
};

}  // namespace locus::nn

LOCUS_API_END
