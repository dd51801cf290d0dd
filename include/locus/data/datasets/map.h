#pragma once
/// \file datasets/map.h
/// MapDataset: a dataset whose batches pass through a transform (dataset.map(transform)).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>
#include <type_traits>
#include <utility>

#include "locus/data/datasets/base.h"

namespace locus::data::datasets {

/// The batches of `Source` passed through `AppliedTransform`'s apply_batch. Built by map() or
/// `dataset.map(transform)`; maps chain: `ds.map(Normalize<>(m, s)).map(Stack<>())`.
template <typename Source, typename AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<Source, AppliedTransform>, typename AppliedTransform::OutputBatchType,
                                       typename Source::BatchRequestType> {
 public:
  /// The dataset underneath.
  using DatasetType = Source;
  /// The transform applied to its batches.
  using TransformType = AppliedTransform;
  /// The source's request type.
  using BatchRequestType = typename Source::BatchRequestType;
  /// What the transform makes of a source batch.
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  /// `transform` over the batches of `dataset`.
  MapDataset(Source dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  /// The source's batch for `request`, transformed.
  OutputBatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }

  /// The source's size: a transform maps batches one to one.
  std::optional<size_t> size() const override { return dataset_.size(); }

  /// The dataset underneath.
  const Source& dataset() const noexcept { return dataset_; }

  /// The transform.
  const AppliedTransform& transform() const noexcept { return transform_; }

 private:
  Source dataset_;
  AppliedTransform transform_;
};

template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform) {
  static_assert(std::is_same_v<typename DatasetType::BatchType, typename TransformType::InputBatchType>,
                "map: the transform's input batch type is not the dataset's batch type");
  return {std::move(dataset), std::move(transform)};
}

}  // namespace locus::data::datasets

LOCUS_API_END
