#pragma once
/// \file samplers/random.h
/// RandomSampler: a fresh random permutation of the indices every epoch.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>

#include "locus/data/samplers/base.h"
#include "locus/dtype.h"
#include "locus/tensor.h"

namespace locus::data::samplers {

/// Visits every index once per epoch in the order of a permutation drawn from Locus's global
/// generator (randperm), so manual_seed makes the epochs reproducible. reset() draws a new one.
class RandomSampler : public Sampler<> {
 public:
  /// A sampler over `size` examples, holding the permutation as `index_dtype` (kInt32 halves
  /// its memory for a large dataset). Draws the first permutation.
  explicit RandomSampler(int64_t size, DType index_dtype = kInt64);

  /// A new permutation, of `new_size` indices when given, and back to its start.
  void reset(std::optional<size_t> new_size = std::nullopt) override;

  /// The next min(batch_size, remaining) indices of the permutation.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

  /// How many indices of the permutation were handed out.
  size_t index() const noexcept { return static_cast<size_t>(index_); }

 private:
  Tensor indices_;
  int64_t index_ = 0;
};

}  // namespace locus::data::samplers

LOCUS_API_END
