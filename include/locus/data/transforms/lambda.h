#pragma once
/// \file transforms/lambda.h
/// Transforms from a function: Lambda (per example) and BatchLambda (per batch).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <functional>
#include <utility>

#include "locus/data/transforms/base.h"

namespace locus::data::transforms {

/// A BatchTransform that calls a function on every batch.
template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  /// The function's type.
  using FunctionType = std::function<Output(Input)>;

  /// The transform that applies `function` to each batch.
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}

  /// function(input_batch).
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }

 private:
  FunctionType function_;
};

/// A Transform that calls a function on every example:
/// `Lambda<Example<>>([](Example<> e) { e.data = e.data * 2; return e; })`.
template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  /// The function's type.
  using FunctionType = std::function<Output(Input)>;

  /// The transform that applies `function` to each example.
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}

  /// function(input).
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  FunctionType function_;
};

}  // namespace locus::data::transforms

LOCUS_API_END
