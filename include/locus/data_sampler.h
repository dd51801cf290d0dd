#pragma once
/// \file data_sampler.h
/// Samplers: which dataset indices a DataLoader visits in an epoch, and in what order
/// (torch.utils.data.Sampler). DistributedSampler gives each process of a distributed job its
/// own shard.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <vector>

#include "locus/arg.h"

namespace locus::data {

/// Chooses the indices of an epoch. A DataLoader with a sampler batches them in this order.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// The indices to visit, for a dataset of `dataset_size` examples.
  virtual std::vector<int64_t> indices(int64_t dataset_size) const = 0;
  /// How many indices indices() returns for that size.
  virtual int64_t size(int64_t dataset_size) const = 0;
};

/// Options of DistributedSampler, by name: `DistributedSamplerOptions(2, 1).shuffle(false)`.
struct DistributedSamplerOptions {
  /// The number of processes and this one's rank, positionally.
  DistributedSamplerOptions(int64_t num_replicas, int64_t rank) : num_replicas_(num_replicas), rank_(rank) {}
  /// The number of processes sharing the dataset.
  LOCUS_ARG(int64_t, num_replicas);
  /// This process's shard, 0 <= rank < num_replicas.
  LOCUS_ARG(int64_t, rank);
  /// A new permutation every epoch (set_epoch), the same on every rank.
  LOCUS_ARG(bool, shuffle) = true;
  /// The seed of the permutation; every rank must use the same one.
  LOCUS_ARG(uint64_t, seed) = 0;
  /// Drops the tail that does not divide evenly instead of repeating examples to fill it.
  LOCUS_ARG(bool, drop_last) = false;
};

/// torch.utils.data.DistributedSampler: every rank gets ceil(n / replicas) indices (or floor,
/// with drop_last), the shards together cover the dataset once per epoch (plus the few examples
/// repeated to make the shards equal), and rank r takes every replicas-th index from r on. Call
/// set_epoch(e) before each epoch, as in PyTorch, or every epoch repeats the same permutation.
class DistributedSampler : public Sampler {
 public:
  /// ValueError for num_replicas < 1 or a rank outside [0, num_replicas).
  explicit DistributedSampler(DistributedSamplerOptions options);
  std::vector<int64_t> indices(int64_t dataset_size) const override;
  int64_t size(int64_t dataset_size) const override;
  /// The epoch whose permutation indices() returns.
  void set_epoch(uint64_t epoch) noexcept { epoch_ = epoch; }
  uint64_t epoch() const noexcept { return epoch_; }
  const DistributedSamplerOptions& options() const noexcept { return options_; }

 private:
  DistributedSamplerOptions options_;
  uint64_t epoch_ = 0;
};

}  // namespace locus::data

LOCUS_API_END
