#pragma once
/// \file dataloader/stateless.h
/// StatelessDataLoader: batches of a dataset in the order a sampler gives, optionally made on
/// worker threads (what make_data_loader returns).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "locus/data/dataloader/workers.h"
#include "locus/data/dataloader_options.h"
#include "locus/errors.h"

namespace locus::data {

/// Iterates a dataset batch by batch, the sampler choosing each batch's request:
/// `for (auto& batch : *loader) ...`. Each loop is one epoch (begin() resets the sampler). With
/// options.workers() > 0, every worker thread owns a copy of the dataset and batches are made
/// up to max_jobs ahead, yet they arrive in the sampler's order; an exception thrown making a
/// batch is rethrown, as it was, by the iteration step that would have yielded that batch (the
/// next step moves past it). One iteration at a time per loader; begin() abandons the last.
template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  /// The batch the iteration yields: the dataset's batch type.
  using BatchType = typename Dataset::BatchType;
  /// The sampler's requests, which the dataset's get_batch takes.
  using BatchRequestType = typename Sampler::BatchRequestType;
  static_assert(std::is_same_v<BatchRequestType, typename Dataset::BatchRequestType>,
                "StatelessDataLoader: the sampler's requests are not what the dataset's get_batch takes");

  /// A loader of `dataset` in the order of `sampler`. ValueError for batch_size < 1 or an
  /// option only the type-erased DataLoader has (shuffle, sampler, pin_memory, device).
  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : sampler_(std::move(sampler)), options_(std::move(options)) {
    if (options_.batch_size() < 1)
      throw ValueError("StatelessDataLoader: batch_size must be positive, got " + std::to_string(options_.batch_size()));
    if (options_.shuffle() || options_.sampler() || options_.pin_memory() || options_.device())
      throw ValueError(
          "StatelessDataLoader: shuffle, sampler, pin_memory and device are options of data::DataLoader; pass a "
          "Sampler (RandomSampler shuffles) to make_data_loader instead");
    const size_t workers = options_.workers();
    if (workers == 0) {
      main_dataset_.emplace(std::move(dataset));
      return;
    }
    if constexpr (std::is_copy_constructible_v<Dataset>) {
      worker_datasets_.reserve(workers);
      for (size_t w = 0; w + 1 < workers; ++w) worker_datasets_.push_back(dataset);
      worker_datasets_.push_back(std::move(dataset));
    } else {
      throw ValueError("StatelessDataLoader: workers > 0 copies the dataset into every worker, and this one is not copyable");
    }
  }

  /// Stops and joins the workers, even in the middle of an epoch.
  ~StatelessDataLoader() { join(); }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  /// The position of an iteration over the loader; `*it` is the current batch.
  class Iterator {
   public:
    /// An input iterator: each batch is visited once.
    using iterator_category = std::input_iterator_tag;
    /// The batch.
    using value_type = BatchType;
    /// Unused, required of iterators.
    using difference_type = std::ptrdiff_t;
    /// A pointer to the batch.
    using pointer = BatchType*;
    /// The batch, writable: the loop may move out of it.
    using reference = BatchType&;

    /// The current batch.
    BatchType& operator*() const { return *loader_->current_; }
    /// The current batch's members.
    BatchType* operator->() const { return &*loader_->current_; }
    /// Moves to the next batch; rethrows what making it threw.
    Iterator& operator++() {
      loader_->advance();
      return *this;
    }
    /// Equal when both are at the end or neither is.
    bool operator==(const Iterator& other) const { return done() == other.done(); }

   private:
    friend class StatelessDataLoader;
    explicit Iterator(StatelessDataLoader* loader) : loader_(loader) {}
    bool done() const noexcept { return !loader_ || !loader_->current_; }
    StatelessDataLoader* loader_;
  };

  /// Starts an epoch: resets the sampler, starts the workers and makes the first batch.
  Iterator begin() {
    join();
    sampler_.reset(std::nullopt);
    if (!worker_datasets_.empty()) {
      const size_t window = options_.max_jobs().value_or(2 * options_.workers());
      requests_.assign(window, std::nullopt);
      results_.assign(window, std::nullopt);
      workers_ = std::make_unique<locus::detail::OrderedWorkers>(
          worker_datasets_.size(), window,
          [this, window](size_t k) {
            requests_[k % window] = next_request();
            return requests_[k % window].has_value();
          },
          [this, window](size_t worker, size_t k) {
            std::optional<BatchRequestType>& request = requests_[k % window];
            results_[k % window].emplace(worker_datasets_[worker].get_batch(std::move(*request)));
            request.reset();
          },
          options_.timeout());
    }
    advance();
    return Iterator(this);
  }

  /// The end of every epoch.
  Iterator end() { return Iterator(nullptr); }

  /// Stops the current epoch's workers and waits for them to finish the batches they are making.
  void join() {
    workers_.reset();
    current_.reset();
  }

  /// The options the loader was made with.
  const DataLoaderOptions& options() const noexcept { return options_; }

 private:
  // The sampler's next request; none for a short last batch with drop_last.
  std::optional<BatchRequestType> next_request() {
    const size_t batch_size = static_cast<size_t>(options_.batch_size());
    std::optional<BatchRequestType> request = sampler_.next(batch_size);
    if (request && options_.drop_last() && request->size() < batch_size) return std::nullopt;
    return request;
  }

  void advance() {
    current_.reset();
    if (!workers_) {
      if (std::optional<BatchRequestType> request = next_request())
        current_.emplace(main_dataset_->get_batch(std::move(*request)));
      return;
    }
    if (const std::optional<size_t> k = workers_->next()) {
      std::optional<BatchType>& slot = results_[*k % results_.size()];
      current_.emplace(std::move(*slot));
      slot.reset();
    }
  }

  Sampler sampler_;
  DataLoaderOptions options_;
  std::optional<Dataset> main_dataset_;     // workers == 0: the iterating thread's
  std::vector<Dataset> worker_datasets_;    // workers > 0: one per worker
  std::optional<BatchType> current_;
  std::vector<std::optional<BatchRequestType>> requests_;  // the ring of in-flight jobs' requests
  std::vector<std::optional<BatchType>> results_;          // and of their batches
  std::unique_ptr<locus::detail::OrderedWorkers> workers_;
};

}  // namespace locus::data

LOCUS_API_END
