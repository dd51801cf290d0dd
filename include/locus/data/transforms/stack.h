#pragma once
/// \file transforms/stack.h
/// Stack: collates a vector of examples into one example of stacked tensors.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <utility>
#include <vector>

#include "locus/data/example.h"
#include "locus/data/transforms/collate.h"
#include "locus/ops.h"

namespace locus::data::transforms {

/// Stacks examples of type `E` (Example<> or TensorExample) along a new first dim.
template <typename E = Example<>>
struct Stack;

/// Example<>s become one Example<> whose data and target are each the stack of the examples'.
template <>
struct Stack<Example<>> : public Collation<Example<>> {
  /// data [B, ...] and target [B, ...]; ValueError for an empty batch, as stack has no shape to
  /// give it.
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (Example<>& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {stack(data), stack(targets)};
  }
};

/// TensorExamples become one TensorExample of their stacked data.
template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  /// data [B, ...].
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (TensorExample& e : examples) data.push_back(std::move(e.data));
    return stack(data);
  }
};

}  // namespace locus::data::transforms

LOCUS_API_END
