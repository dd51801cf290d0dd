#pragma once
/// \file dataloader_options.h
/// DataLoaderOptions: how a data loader batches, for both loaders (make_data_loader's
/// StatelessDataLoader and the type-erased DataLoader).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "locus/arg.h"
#include "locus/data_sampler.h"
#include "locus/device.h"

namespace locus::data {

/// How a data loader batches: LibTorch's DataLoaderOptions, plus the type-erased DataLoader's
/// PyTorch-style options (shuffle, seed, pin_memory, device, sampler), which a
/// StatelessDataLoader rejects (it takes a Sampler object instead).
struct DataLoaderOptions {
  /// The batch size, positionally: `DataLoaderOptions(32).workers(2)`.
  /* implicit */ DataLoaderOptions(int64_t batch_size = 1) : batch_size_(batch_size) {}
  /// Examples per batch.
  LOCUS_ARG(int64_t, batch_size);
  /// Threads that assemble batches ahead of use (0: the iterating thread does it).
  LOCUS_ARG(size_t, workers) = 0;
  /// At most this many batches in flight (being made or made and not yet used); 2 * workers
  /// when unset.
  LOCUS_ARG(std::optional<size_t>, max_jobs);
  /// How long the iterating thread waits for a worker's batch before it throws Error; forever
  /// when unset.
  LOCUS_ARG(std::optional<std::chrono::milliseconds>, timeout);
  /// Batches in the sampler's order. Both loaders always keep that order (a batch that is
  /// ready early waits for its turn), so false permits what true guarantees.
  LOCUS_ARG(bool, enforce_ordering) = true;
  /// Drops the last batch when it is smaller than batch_size.
  LOCUS_ARG(bool, drop_last) = false;
  /// DataLoader only: a new permutation every epoch, a function of (seed, epoch) only.
  LOCUS_ARG(bool, shuffle) = false;
  /// DataLoader only: the seed of the shuffle.
  LOCUS_ARG(uint64_t, seed) = 0;
  /// DataLoader only: batches in page-locked memory, so copies to a GPU can be asynchronous.
  LOCUS_ARG(bool, pin_memory) = false;
  /// DataLoader only: batches arrive already on this device, the next one copied
  /// (non_blocking) while the current one is used.
  LOCUS_ARG(std::optional<Device>, device);
  /// DataLoader only: the indices of each epoch, in order (DistributedSampler for a distributed
  /// job); instead of shuffle, which must then be false (ValueError), as in PyTorch.
  LOCUS_ARG(std::shared_ptr<const Sampler>, sampler);
};

}  // namespace locus::data

LOCUS_API_END
