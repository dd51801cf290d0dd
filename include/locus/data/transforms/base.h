#pragma once
/// \file transforms/base.h
/// Transform bases: BatchTransform rewrites a whole batch, Transform one example at a time.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <utility>
#include <vector>

namespace locus::data::transforms {

/// Turns a batch of type `InputBatch` into one of type `OutputBatch` (dataset.map applies it to
/// every batch the dataset yields).
template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  /// What apply_batch takes.
  using InputBatchType = InputBatch;
  /// What apply_batch returns.
  using OutputBatchType = OutputBatch;

  virtual ~BatchTransform() = default;

  /// The transformed batch.
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

/// Transforms examples one by one: a batch (a vector of examples) becomes the vector of their
/// apply() results.
template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  /// What apply takes.
  using InputType = Input;
  /// What apply returns.
  using OutputType = Output;

  /// The transformed example.
  virtual Output apply(Input input) = 0;

  /// apply() of every example, in order.
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (Input& input : input_batch) out.push_back(apply(std::move(input)));
    return out;
  }
};

}  // namespace locus::data::transforms

LOCUS_API_END
