#pragma once
/// \file datasets/base.h
/// The dataset bases of LibTorch's pipeline: BatchDataset (yields a batch per request of
/// indices) and Dataset (yields one example per index; batches collect them).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "locus/data/example.h"

namespace locus {
/// std::optional under LibTorch's name, which dataset sizes are written with:
/// `torch::optional<size_t> size() const override`.
using std::optional;
/// std::nullopt under LibTorch's name.
using std::nullopt;
}  // namespace locus

namespace locus::data::datasets {

template <typename Source, typename AppliedTransform>
class MapDataset;

/// A MapDataset that applies `transform` to the batches of `dataset` (defined in datasets/map.h).
template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform);

/// A dataset that answers a request (by default, a list of indices) with a whole batch. `Self`
/// is the deriving class, so map() can return a MapDataset over it.
template <typename Self, typename Batch = std::vector<Example<>>, typename BatchRequest = std::vector<size_t>>
class BatchDataset {
 public:
  /// The deriving class.
  using SelfType = Self;
  /// What get_batch returns.
  using BatchType = Batch;
  /// What get_batch takes (a sampler of the same BatchRequestType produces it).
  using BatchRequestType = BatchRequest;

  virtual ~BatchDataset() = default;

  /// The batch for `request`.
  virtual Batch get_batch(BatchRequest request) = 0;

  /// The number of examples, or nullopt when it is unknown.
  virtual std::optional<size_t> size() const = 0;

  /// A MapDataset over a copy of this dataset that applies `transform` to every batch.
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) const& {
    return datasets::map(static_cast<const Self&>(*this), std::move(transform));
  }

  /// A MapDataset over this dataset, moved into it, that applies `transform` to every batch.
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

/// A dataset of single examples: get(i) is example i, and a batch is the vector of the
/// requested examples (a Stack transform turns it into one stacked Example).
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  /// What get returns.
  using ExampleType = SingleExample;

  /// Example `index`, 0 <= index < size().
  virtual ExampleType get(size_t index) = 0;

  /// get(i) for every index of `indices`, in order.
  std::vector<ExampleType> get_batch(std::vector<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (const size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

}  // namespace locus::data::datasets

LOCUS_API_END

// map() returns a MapDataset, so a dataset is usable only with its definition; this header comes
// first in map.h, which therefore cannot be included above.
#include "locus/data/datasets/map.h"
