#pragma once
/// \file samplers/base.h
/// Sampler: the stateful source of a data loader's batch requests (torch::data::samplers).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <optional>
#include <vector>

namespace locus::data::samplers {

/// Hands out the requests of an epoch, one batch at a time. Not thread-safe: a data loader
/// calls it from one thread. (LibTorch's save/load to a serialize archive are not here: Locus
/// has no such archive.)
template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  /// What next() returns, and what the dataset's get_batch must take.
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;

  /// Starts a new epoch, over `new_size` examples when given (the old size otherwise).
  virtual void reset(std::optional<size_t> new_size) = 0;

  /// The next request, of at most `batch_size` indices, or nullopt when the epoch is over.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

}  // namespace locus::data::samplers

LOCUS_API_END
