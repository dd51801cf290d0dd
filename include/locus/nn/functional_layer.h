#pragma once
/// \file functional_layer.h
/// nn::Functional: any function of a tensor as a module, so it can sit in a Sequential, as
/// LibTorch's torch::nn::Functional: `nn::Functional(relu)`, `nn::Functional(leaky_relu, 0.2)`,
/// `nn::Functional([](Tensor x) { return x.flatten(1); })`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/tensor.h"

namespace locus::nn {

/// A module whose forward is a function. It has no parameters or buffers.
class FunctionalImpl : public Module {
 public:
  /// The function of one tensor.
  using Function = std::function<Tensor(Tensor)>;
  /// Wraps `function`.
  explicit FunctionalImpl(Function function) : function_(std::move(function)) {}
  /// Wraps `function` called with the input and then `args` (`Functional(leaky_relu, 0.2)`),
  /// checked at compile time to be callable so and to return a tensor.
  template <class F, class Arg, class... Args>
    requires std::is_invocable_r_v<Tensor, F&, const Tensor&, Arg&, Args&...>
  FunctionalImpl(F function, Arg&& arg, Args&&... args)
      : function_([function, bound = std::make_tuple(std::forward<Arg>(arg), std::forward<Args>(args)...)](
                      Tensor input) mutable {
          return std::apply([&](auto&... extra) -> Tensor { return function(input, extra...); }, bound);
        }) {}
  /// The function applied to `input`.
  Tensor forward(const Tensor& input) override { return function_(input); }
  /// Calls the function (LibTorch's operator()).
  Tensor operator()(Tensor input) { return function_(std::move(input)); }

 private:
  Function function_;
};

/// The handle of FunctionalImpl. A bare function name converts as LibTorch's does
/// (`Functional(relu)`); an overloaded one needs a cast or a lambda.
class Functional : public ModuleHolder<FunctionalImpl> {
 public:
  using ModuleHolder<FunctionalImpl>::ModuleHolder;
  /// A module calling `function` (a function pointer, a lambda, a std::function).
  template <class F>
    requires(std::is_invocable_r_v<Tensor, F&, const Tensor&> && !std::is_base_of_v<ModuleHolder<FunctionalImpl>, std::decay_t<F>> &&
             !std::is_same_v<std::decay_t<F>, std::nullptr_t>)
  Functional(F function)  // NOLINT: implicit, as LibTorch's
      : ModuleHolder<FunctionalImpl>(std::make_shared<FunctionalImpl>(FunctionalImpl::Function(std::move(function)))) {}
  /// A module calling `function(input, args...)`.
  template <class F, class Arg, class... Args>
    requires std::is_invocable_r_v<Tensor, F&, const Tensor&, Arg&, Args&...>
  Functional(F function, Arg&& arg, Args&&... args)
      : ModuleHolder<FunctionalImpl>(
            std::make_shared<FunctionalImpl>(std::move(function), std::forward<Arg>(arg), std::forward<Args>(args)...)) {}
  LOCUS_HANDLE_TO_METHODS(Functional)
};

}  // namespace locus::nn

LOCUS_API_END
