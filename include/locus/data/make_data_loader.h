#pragma once
/// \file make_data_loader.h
/// make_data_loader: LibTorch's way to build a data loader over a dataset.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <memory>
#include <string>
#include <optional>
#include <utility>

#include "locus/data/dataloader/stateless.h"
#include "locus/data/dataloader_options.h"
#include "locus/data/samplers/random.h"
#include "locus/errors.h"

namespace locus::data {

/// A loader of `dataset` in the order of `sampler`:
/// `make_data_loader(ds, SequentialSampler(n), DataLoaderOptions(64).workers(2))`.
template <typename Dataset, typename Sampler>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler), std::move(options));
}

/// A loader of `dataset` whose sampler is `Sampler(dataset.size())`, a RandomSampler unless
/// named: `make_data_loader(ds, 64)`, `make_data_loader<SequentialSampler>(ds, options)`.
/// ValueError for a dataset without a size.
template <typename Sampler = samplers::RandomSampler, typename Dataset,
          typename = typename Dataset::BatchType>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  if (!size) throw ValueError("make_data_loader: the dataset has no size to make its sampler from; pass a sampler");
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}

}  // namespace locus::data

LOCUS_API_END
