#pragma once
/// \file samplers/distributed.h
/// Samplers that give each replica (rank) of a distributed job its own shard of the dataset.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/data/samplers/base.h"

namespace locus::data::samplers {

/// The shard arithmetic of the distributed samplers. Every replica gets local_sample_count()
/// indices: ceil(size / num_replicas), padding the shards by repeating indices, when
/// allow_duplicates; floor(size / num_replicas), leaving the remainder out, otherwise.
template <typename BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  /// Replica `rank` of `num_replicas` over `size` examples.
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true)
      : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {}

  /// The epoch whose order the next reset() makes; set it before each epoch (every replica to
  /// the same value) or every epoch repeats one order.
  void set_epoch(size_t epoch) { epoch_ = epoch; }

  /// The epoch set_epoch gave.
  size_t epoch() const { return epoch_; }

 protected:
  /// The number of indices in this replica's shard.
  size_t local_sample_count() const {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }

  /// The dataset's size.
  size_t size_;
  /// The number of replicas.
  size_t num_replicas_;
  /// This replica.
  size_t rank_;
  /// The epoch.
  size_t epoch_ = 0;
  /// Pad the shards (true) or drop the remainder (false).
  bool allow_duplicates_;
};

/// Each replica's shard of a permutation that depends only on the epoch, so the replicas agree
/// without talking: shard r is positions [r * k, (r + 1) * k) of the permutation (k =
/// local_sample_count()), padded by repeating its start when allow_duplicates.
class DistributedRandomSampler : public DistributedSampler<> {
 public:
  /// Replica `rank` of `num_replicas` over `size` examples. ValueError for num_replicas == 0 or
  /// rank >= num_replicas.
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  /// The permutation of epoch(), over `new_size` examples when given.
  void reset(std::optional<size_t> new_size = std::nullopt) override;

  /// The next indices of this replica's shard.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

  /// How many indices of the shard were handed out.
  size_t index() const noexcept { return next_; }

 private:
  std::vector<size_t> shard_;
  size_t next_ = 0;
};

/// Each replica's contiguous shard of 0, 1, ..., size - 1, in order: shard r is [r * k,
/// (r + 1) * k), the indices past the end wrapping to the start when allow_duplicates.
class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  /// Replica `rank` of `num_replicas` over `size` examples. ValueError for num_replicas == 0 or
  /// rank >= num_replicas.
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);

  /// Back to the start of the shard, over `new_size` examples when given.
  void reset(std::optional<size_t> new_size = std::nullopt) override;

  /// The next indices of this replica's shard.
  std::optional<std::vector<size_t>> next(size_t batch_size) override;

  /// How many indices of the shard were handed out.
  size_t index() const noexcept { return next_ - begin_; }

 private:
  size_t begin_ = 0, end_ = 0, next_ = 0;
};

}  // namespace locus::data::samplers

LOCUS_API_END
