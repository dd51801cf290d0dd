// The DataLoader. See Note [DataLoader pipeline].

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "locus/autograd.h"
#include "locus/data.h"
#include "locus/errors.h"

// Note [DataLoader pipeline]
// An epoch fixes its batches up front (the order is a function of seed and epoch only, so a
// run is reproducible whatever the thread timing). Workers, if any, assemble batches (and pin
// them) into numbered slots at most `window` batches ahead of the consumer; the consumer takes
// them strictly in order. With a target device, the iterating thread starts the copy of batch
// k+1 (non_blocking, so from pinned memory it overlaps the work on batch k) before handing out
// batch k.

namespace locus::data {

struct DataLoader::Epoch {
  std::vector<std::vector<int64_t>> batches;
  size_t next_out = 0;  // index of the batch `current` holds
  Example current, ahead;
  bool has_ahead = false;
  // Workers.
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::optional<Example>> slots;
  size_t next_claim = 0;
  size_t consumed = 0;
  size_t window = 0;
  bool stop = false;
  std::exception_ptr error;
  std::vector<std::thread> workers;

  ~Epoch() {
    {
      std::lock_guard lock(mutex);
      stop = true;
    }
    cv.notify_all();
    for (auto& t : workers) t.join();
  }
};

namespace {

Example assemble(const Dataset& dataset, const std::vector<int64_t>& indices, bool pin) {
  NoGradGuard no_grad;
  Example e = dataset.get_batch(indices);
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
  if (options_.num_workers() < 0) throw ValueError("DataLoader: num_workers must be >= 0");
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
  if (options_.num_workers() > 0 && !run->batches.empty()) {
    run->slots.resize(run->batches.size());
    run->window = static_cast<size_t>(2 * options_.num_workers());
    for (int w = 0; w < options_.num_workers(); ++w)
      run->workers.emplace_back([this, e = run.get()] {
        for (;;) {
          size_t k;
          {
            std::unique_lock lock(e->mutex);
            e->cv.wait(lock, [&] { return e->stop || e->next_claim >= e->batches.size() || e->next_claim < e->consumed + e->window; });
            if (e->stop || e->next_claim >= e->batches.size()) return;
            k = e->next_claim++;
          }
          try {
            Example ex = assemble(*dataset_, e->batches[k], options_.pin_memory());
            std::lock_guard lock(e->mutex);
            e->slots[k] = std::move(ex);
          } catch (...) {
            std::lock_guard lock(e->mutex);
            if (!e->error) e->error = std::current_exception();
          }
          e->cv.notify_all();
        }
      });
  }
  run_ = std::move(run);
  if (!run_->batches.empty()) {
    // Prime: batch 0 becomes current (and batch 1 starts moving); advance() wraps -1 to 0.
    run_->next_out = static_cast<size_t>(-1);
    advance();
  }
  return Iterator(this);
}

const Example& DataLoader::current() const { return run_->current; }

bool DataLoader::exhausted() const noexcept { return !run_ || run_->next_out >= run_->batches.size(); }

void DataLoader::advance() {
  Epoch& e = *run_;
  auto produce = [&](size_t k) -> Example {
    Example ex;
    if (e.workers.empty()) {
      ex = assemble(*dataset_, e.batches[k], options_.pin_memory());
    } else {
      std::unique_lock lock(e.mutex);
      e.cv.wait(lock, [&] { return e.slots[k].has_value() || e.error; });
      if (!e.slots[k]) std::rethrow_exception(e.error);
      ex = std::move(*e.slots[k]);
      e.slots[k].reset();
      e.consumed = k + 1;
      lock.unlock();
      e.cv.notify_all();
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
    e.current = Example();
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
