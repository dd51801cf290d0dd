#pragma once
/// \file forward_hooks.h
/// How a module's forward is called with its forward hooks around it (Module::
/// register_forward_pre_hook), for forwards of any signature: the tensor arguments and the
/// tensors of the result are handed to the hooks as vectors and written back.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "locus/nn/module.h"

namespace locus::nn::detail {

/// A container of tensors (std::vector<Tensor>).
template <class V>
concept TensorRange = requires(V& v) {
  typename V::value_type;
  v.begin();
  v.end();
} && std::is_same_v<typename V::value_type, Tensor>;
/// A tuple or pair (not an array, which has data()).
template <class V>
concept TupleLike = requires(V& v) { std::tuple_size<V>::value; } && !requires(V& v) { v.data(); };
/// An optional.
template <class V>
concept OptionalLike = requires(V& v) {
  typename V::value_type;
  v.has_value();
};

/// Appends a pointer to every tensor in `value`: a Tensor, or those inside a tuple, pair,
/// vector or optional (nested too); other types hold none.
template <class T>
void collect_tensors(T& value, std::vector<Tensor*>& out) {
  using V = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<V, Tensor>) {
    out.push_back(const_cast<Tensor*>(&value));
  } else if constexpr (TupleLike<V>) {
    std::apply([&](auto&... parts) { (collect_tensors(parts, out), ...); }, value);
  } else if constexpr (TensorRange<V>) {
    for (auto& t : value) collect_tensors(t, out);
  } else if constexpr (OptionalLike<V>) {
    if (value.has_value()) collect_tensors(*value, out);
  }
}

/// `module.forward(args...)` with the module's hooks run around it. The arguments are copied
/// (so the pre-hooks can replace tensors among them) and passed on with their value categories;
/// a forward that returns a reference gets its pre-hooks only.
template <class M, class... Args>
decltype(auto) forward_with_hooks(M& module, Args&&... args) {
  using Result = decltype(module.forward(std::forward<Args>(args)...));
  std::tuple<std::decay_t<Args>...> copies(std::forward<Args>(args)...);
  std::vector<Tensor*> input_slots;
  std::apply([&](auto&... a) { (collect_tensors(a, input_slots), ...); }, copies);
  std::vector<Tensor> inputs;
  for (Tensor* t : input_slots) inputs.push_back(*t);
  module.run_forward_pre_hooks(inputs);
  for (size_t i = 0; i < input_slots.size(); ++i) *input_slots[i] = inputs[i];
  const auto call = [&]<size_t... I>(std::index_sequence<I...>) -> Result {
    return module.forward(static_cast<std::conditional_t<std::is_lvalue_reference_v<Args>, std::decay_t<Args>&,
                                                          std::decay_t<Args>&&>>(std::get<I>(copies))...);
  };
  if constexpr (std::is_reference_v<Result> || std::is_void_v<Result>) {
    return call(std::index_sequence_for<Args...>{});
  } else {
    Result out = call(std::index_sequence_for<Args...>{});
    std::vector<Tensor*> output_slots;
    collect_tensors(out, output_slots);
    std::vector<Tensor> outputs;
    for (Tensor* t : output_slots) outputs.push_back(*t);
    module.run_forward_hooks(inputs, outputs);
    for (size_t i = 0; i < output_slots.size() && i < outputs.size(); ++i) *output_slots[i] = outputs[i];
    return out;
  }
}

}  // namespace locus::nn::detail

LOCUS_API_END
