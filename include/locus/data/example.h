#pragma once
/// \file example.h
/// Example: what a dataset yields, a piece of data and its target (torch::data::Example).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <utility>

#include "locus/tensor.h"

namespace locus::data {

/// One example of a dataset, or a batch of them stacked along a leading dim: its data and its
/// target (label). `Example<>` holds two tensors.
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  /// The type of `data`.
  using DataType = Data;
  /// The type of `target`.
  using TargetType = Target;
  /// Empty data and target.
  Example() = default;
  /// An example of `data` labelled `target`.
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}
  /// The input.
  Data data;
  /// The label.
  Target target;
};

namespace example {
/// The target of an unlabelled example: `Example<Tensor, example::NoTarget>` has no `target`.
using NoTarget = void;
}  // namespace example

/// An example without a target. It converts to its data, so code written for `Example<D>` of a
/// labelled dataset reads an unlabelled one's batches as plain data.
template <typename Data>
struct Example<Data, example::NoTarget> {
  /// The type of `data`.
  using DataType = Data;
  /// Always example::NoTarget.
  using TargetType = example::NoTarget;
  /// Empty data.
  Example() = default;
  /// The example holding `data`; implicit, so a dataset's get() may return the tensor itself.
  /* implicit */ Example(Data data) : data(std::move(data)) {}
  /// The data, writable.
  operator Data&() { return data; }
  /// The data.
  operator const Data&() const { return data; }
  /// The input.
  Data data;
};

/// An unlabelled example of one tensor (what datasets::TensorDataset yields).
using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace locus::data

LOCUS_API_END
