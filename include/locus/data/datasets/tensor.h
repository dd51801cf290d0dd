#pragma once
/// \file datasets/tensor.h
/// datasets::TensorDataset: the rows of one tensor, as unlabelled examples.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>
#include <utility>
#include <vector>

#include "locus/data/datasets/base.h"
#include "locus/data/example.h"
#include "locus/ops.h"

namespace locus::data::datasets {

/// Example i is row i of one tensor (LibTorch's TensorDataset). For rows of data with targets,
/// data::TensorDataset(data, targets) is the type-erased DataLoader's dataset.
struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  /// The tensors stacked into one: example i is tensors[i].
  explicit TensorDataset(const std::vector<Tensor>& tensors) : TensorDataset(stack(tensors)) {}

  /// Example i is tensor[i].
  explicit TensorDataset(Tensor tensor) : tensor(std::move(tensor)) {}

  /// Row `index`; IndexError out of range.
  TensorExample get(size_t index) override { return tensor[static_cast<int64_t>(index)]; }

  /// The number of rows.
  std::optional<size_t> size() const override { return static_cast<size_t>(tensor.size(0)); }

  /// The rows.
  Tensor tensor;
};

}  // namespace locus::data::datasets

LOCUS_API_END
