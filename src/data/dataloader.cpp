// The DataLoader. See Note [DataLoader pipeline].

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>

#include "locus/autograd.h"
#include "locus/data.h"
#include "locus/errors.h"

// Note [DataLoader pipeline]
// An epoch fixes its batches up front (the order is a function of seed and epoch only, so a run
// is reproducible whatever the thread timing). Workers, if any, assemble batches (and pin them)
// into a ring of max_jobs slots at most that many batches ahead of the consumer, which takes them
// strictly in order: locus::detail::OrderedWorkers (src/data/workers.cpp), the engine that
// make_data_loader's StatelessDataLoader runs on too. That loader has no batch list: its workers
// draw each job's request from the sampler, one at a time and in job order, under the engine's
// lock, so the order is the sampler's whatever the timing. With a target device, the iterating
// thread starts the copy of batch k+1 (non_blocking, so from pinned memory it overlaps the work
// on batch k) before handing out batch k.

namespace locus::data {

struct DataLoader::Epoch {
  std::vector<std::vector<int64_t>> batches;
  size_t next_out = 0;  // index of the batch `current` holds
  Example<> current, ahead;
  bool has_ahead = false;
  std::vector<std::optional<Example<>>> slots;      // the workers' ring of finished batches
  std::unique_ptr<locus::detail::OrderedWorkers> workers;  // last, so it stops before the ring goes
};

namespace {

Example<> assemble(const Dataset& dataset, const std::vector<int64_t>& indices, bool pin) {
  NoGradGuard no_grad;
  Example<> e = dataset.get_batch(indices);
  if (pin) {
    if (e.data.is_cpu()) e.data = e.data.pin_memory();
    if (e.target.is_cpu()) e.target = e.target.pin_memory();
  }
  return e;
}

}  // namespace

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(options) {
  if (!dataset_) throw ValueError("DataLoader: the dataset is null");
  if (options_.batch_size() <= 0) throw ValueError("DataLoader: batch_size must be positive, got " + std::to_string(options_.batch_size()));
  if (options_.max_jobs() && *options_.max_jobs() == 0) throw ValueError("DataLoader: max_jobs must be positive");
  if (options_.sampler() && options_.shuffle())
    throw ValueError("DataLoader: sampler option is mutually exclusive with shuffle");
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::size() const noexcept {
  const int64_t n = options_.sampler() ? options_.sampler()->size(dataset_->size()) : dataset_->size();
  const int64_t b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
  run_.reset();  // stops the workers of an unfinished previous epoch
  auto run = std::make_unique<Epoch>();
  std::vector<int64_t> order;
  if (options_.sampler()) {
    order = options_.sampler()->indices(dataset_->size());
  } else {
    order.resize(static_cast<size_t>(dataset_->size()));
    std::iota(order.begin(), order.end(), 0);
  }
  if (options_.shuffle()) {
    std::mt19937_64 rng(options_.seed() * 0x9E3779B97F4A7C15ull + epoch_);
    std::shuffle(order.begin(), order.end(), rng);
  }
  ++epoch_;
  const size_t b = static_cast<size_t>(options_.batch_size());
  for (size_t i = 0; i < order.size(); i += b) {
    if (options_.drop_last() && i + b > order.size()) break;
    run->batches.emplace_back(order.begin() + static_cast<long>(i), order.begin() + static_cast<long>(std::min(i + b, order.size())));
  }
  if (options_.workers() > 0 && !run->batches.empty()) {
    const size_t window = options_.max_jobs().value_or(2 * options_.workers());
    run->slots.resize(window);
    Epoch* e = run.get();
    run->workers = std::make_unique<locus::detail::OrderedWorkers>(
        options_.workers(), window, [e](size_t k) { return k < e->batches.size(); },
        [this, e](size_t, size_t k) {
          e->slots[k % e->slots.size()] = assemble(*dataset_, e->batches[k], options_.pin_memory());
        },
        options_.timeout());
  }
  run_ = std::move(run);
  if (!run_->batches.empty()) {
    // Prime: batch 0 becomes current (and batch 1 starts moving); advance() wraps -1 to 0.
    run_->next_out = static_cast<size_t>(-1);
    advance();
  }
  return Iterator(this);
}

const Example<>& DataLoader::current() const { return run_->current; }

bool DataLoader::exhausted() const noexcept { return !run_ || run_->next_out >= run_->batches.size(); }

void DataLoader::advance() {
  Epoch& e = *run_;
  auto produce = [&](size_t k) -> Example<> {
    Example<> ex;
    if (!e.workers) {
      ex = assemble(*dataset_, e.batches[k], options_.pin_memory());
    } else {
      // Batches are all known, so the engine's next job is batch k.
      const std::optional<size_t> j = e.workers->next();
      std::optional<Example<>>& slot = e.slots[*j % e.slots.size()];
      ex = std::move(*slot);
      slot.reset();
    }
    if (options_.device()) {
      NoGradGuard no_grad;
      ex.data = ex.data.to(*options_.device(), /*non_blocking=*/true);
      ex.target = ex.target.to(*options_.device(), /*non_blocking=*/true);
    }
    return ex;
  };
  const size_t k = e.next_out + 1;  // wraps from -1 to 0 when priming
  e.next_out = k;
  if (k >= e.batches.size()) {
    e.current = Example<>();
    return;
  }
  e.current = e.has_ahead ? std::move(e.ahead) : produce(k);
  e.has_ahead = false;
  if (options_.device() && k + 1 < e.batches.size()) {
    e.ahead = produce(k + 1);
    e.has_ahead = true;
  }
}

}  // namespace locus::data
