#pragma once
/// \file samplers/sequential.h
/// SequentialSampler: indices 0, 1, 2, ... in order.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/data/samplers/base.h"

namespace locus::data::samplers {

/// Visits 0, 1, ..., size - 1 in order, every epoch.
class SequentialSampler : public Sampler<> {
 public:
  /// A sampler over `size` examples.
  explicit SequentialSampler(size_t size) : size_(size) {}

  /// Back to index 0, with a new size when given.
  void reset(std::optional<size_t> new_size = std::nullopt) override;

  /// The next min(batch_size, remaining) indices.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

  /// The next index to hand out.
  size_t index() const noexcept { return index_; }

 private:
  size_t size_;
  size_t index_ = 0;
};

}  // namespace locus::data::samplers

LOCUS_API_END
