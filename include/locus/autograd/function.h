#pragma once
/// \file autograd/function.h
/// Custom autograd Functions as LibTorch writes them (torch/csrc/autograd/custom_function.h):
///
///     struct MulConstant : autograd::Function<MulConstant> {
///       static Tensor forward(autograd::AutogradContext* ctx, Tensor x, double c) {
///         ctx->saved_data["c"] = c;
///         return x * c;
///       }
///       static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
///         return {g[0] * ctx->saved_data["c"].toDouble(), Tensor()};
///       }
///     };
///     Tensor y = MulConstant::apply(x, 5.5);
///
/// forward runs without recording; its outputs get one node, named "<T>Backward", whose
/// backward is T::backward, with one gradient per forward argument (undefined for arguments
/// that are not tensors). The node behaves as the built-in ones: hooks, version checks of the
/// saved tensors, and double backward when backward is written with differentiable ops.
/// docs/autograd.md has the details.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "locus/autograd.h"
#include "locus/autograd/node.h"
#include "locus/ivalue.h"
#include "locus/tensor.h"

namespace locus::autograd {

class CustomFunctionNode;

/// LibTorch's IndexRange: the forward arguments [first, second).
using IndexRange = std::pair<size_t, size_t>;

/// What a custom Function's forward leaves for its backward.
struct AutogradContext {
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;

  /// Values of any kind kept for backward (`ctx->saved_data["scale"] = 2.0`).
  std::unordered_map<std::string, IValue> saved_data;

  /// Keeps tensors (inputs or outputs of forward) for backward; read them back with
  /// get_saved_variables(). Their versions are checked when backward runs. Call it once.
  void save_for_backward(variable_list to_save);
  /// Declares inputs that forward modified in place: they take this node as their history.
  void mark_dirty(const variable_list& inputs);
  /// Declares outputs that are not differentiable (indices): they do not require grad.
  void mark_non_differentiable(const variable_list& outputs);
  /// Whether backward gets zeros (true, the default) or undefined tensors for outputs that
  /// received no gradient.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  /// The tensors save_for_backward kept, in order (a ValueError when one was modified in place
  /// since, or after the graph was freed).
  variable_list get_saved_variables() const;
  /// True when forward argument `index` is a tensor that requires grad.
  bool needs_input_grad(size_t index) const;
  /// True when any forward argument in one of the ranges needs a gradient.
  bool needs_input_grad(std::initializer_list<IndexRange> ranges) const;

 private:
  friend class CustomFunctionNode;
  variable_list to_save_;
  std::unordered_set<const detail::TensorImpl*> dirty_, non_differentiable_;
  bool materialize_grads_ = true;
  std::vector<bool> needs_input_grad_;
  const CustomFunctionNode* node_ = nullptr;
};

namespace function_impl {

/// The backward of a custom Function, type-erased.
using CustomBackward = std::function<variable_list(AutogradContext*, variable_list)>;

/// The node of one call of a custom Function: `type_name` is typeid(T).name(); `inputs` are
/// the tensor arguments in order, `is_tensor` says for each forward argument whether it was
/// one (a list of tensors counts as one argument per element).
LOCUS_API std::shared_ptr<CustomFunctionNode> make_custom_node(const char* type_name, CustomBackward backward,
                                                               variable_list inputs, std::vector<bool> is_tensor);
/// The context forward writes into.
LOCUS_API AutogradContext* context_of(CustomFunctionNode& node);
/// Gives forward's outputs their history (when grad mode is on and an input requires grad)
/// and turns save_for_backward's tensors into saved tensors; returns the outputs to hand out.
LOCUS_API variable_list finish_custom_call(const std::shared_ptr<CustomFunctionNode>& node, variable_list outputs);

inline void collect_argument(variable_list& inputs, std::vector<bool>& is_tensor, const Tensor& t) {
  inputs.push_back(t);
  is_tensor.push_back(true);
}
inline void collect_argument(variable_list& inputs, std::vector<bool>& is_tensor, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) collect_argument(inputs, is_tensor, t);
}
template <class Other>
void collect_argument(variable_list&, std::vector<bool>& is_tensor, const Other&) {
  is_tensor.push_back(false);
}

}  // namespace function_impl

/// The base of a custom Function: T defines `static <Tensor or variable_list> forward(
/// AutogradContext*, args...)` and `static variable_list backward(AutogradContext*,
/// variable_list grad_outputs)`, and calls T::apply(args...).
template <class T>
struct Function {
  /// Runs T::forward without recording and records one node for its outputs.
  template <class X = T, class... Args>
  static auto apply(Args&&... args) {
    variable_list inputs;
    std::vector<bool> is_tensor;
    (function_impl::collect_argument(inputs, is_tensor, args), ...);
    const std::shared_ptr<CustomFunctionNode> node = function_impl::make_custom_node(
        typeid(X).name(), [](AutogradContext* ctx, variable_list grads) { return X::backward(ctx, std::move(grads)); },
        std::move(inputs), std::move(is_tensor));
    AutogradContext* ctx = function_impl::context_of(*node);
    using Output = decltype(X::forward(ctx, std::forward<Args>(args)...));
    Output output;
    {
      const AutoGradMode no_recording(false);
      output = X::forward(ctx, std::forward<Args>(args)...);
    }
    if constexpr (std::is_same_v<Output, Tensor>) {
      return function_impl::finish_custom_call(node, {output})[0];
    } else {
      static_assert(std::is_same_v<Output, variable_list>, "a custom Function's forward returns a Tensor or a variable_list");
      return function_impl::finish_custom_call(node, std::move(output));
    }
  }
};

}  // namespace locus::autograd

LOCUS_API_END
