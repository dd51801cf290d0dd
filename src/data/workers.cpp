// OrderedWorkers, the data loaders' worker engine. See Note [DataLoader pipeline].

#include "locus/data/dataloader/workers.h"

#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "locus/errors.h"

namespace locus::detail {

namespace {
constexpr size_t kNone = std::numeric_limits<size_t>::max();
}  // namespace

struct OrderedWorkers::State {
  struct Slot {
    size_t job = kNone;  // the job the slot holds, or kNone
    bool done = false;
    std::exception_ptr error;
  };

  std::function<bool(size_t)> claim;
  std::function<void(size_t, size_t)> run;
  size_t window;
  std::optional<std::chrono::milliseconds> timeout;

  std::mutex mutex;
  std::condition_variable cv;
  std::vector<Slot> slots;
  size_t next_claim = 0;
  size_t taken = 0;     // jobs handed to the consumer: 0 .. taken - 1
  size_t released = 0;  // jobs whose slots are free again: 0 .. released - 1
  size_t end = kNone;   // the first job number that is not a job
  bool stop = false;
  std::vector<std::thread> threads;

  void work(size_t worker) {
    for (;;) {
      size_t k;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stop || next_claim >= end || next_claim < released + window; });
        if (stop || next_claim >= end) return;
        k = next_claim++;
        Slot& s = slots[k % window];
        s = Slot{k, false, nullptr};
        bool exists = false;
        try {
          exists = claim(k);
        } catch (...) {
          // A sampler that throws ends the epoch; the consumer sees the error at job k.
          s.done = true;
          s.error = std::current_exception();
          end = k + 1;
          cv.notify_all();
          continue;
        }
        if (!exists) {
          s.job = kNone;
          end = k;
          cv.notify_all();
          return;
        }
      }
      std::exception_ptr error;
      try {
        run(worker, k);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        Slot& s = slots[k % window];
        s.done = true;
        s.error = error;
      }
      cv.notify_all();
    }
  }
};

OrderedWorkers::OrderedWorkers(size_t workers, size_t window, std::function<bool(size_t)> claim,
                               std::function<void(size_t, size_t)> run, std::optional<std::chrono::milliseconds> timeout)
    : state_(std::make_unique<State>()) {
  if (workers == 0 || window == 0)
    throw ValueError("data loader: workers and max_jobs must be positive, got " + std::to_string(workers) + " and " +
                     std::to_string(window));
  State& s = *state_;
  s.claim = std::move(claim);
  s.run = std::move(run);
  s.window = window;
  s.timeout = timeout;
  s.slots.resize(window);
  s.threads.reserve(workers);
  try {
    for (size_t w = 0; w < workers; ++w) s.threads.emplace_back([&s, w] { s.work(w); });
  } catch (...) {
    stop_and_join();
    throw;
  }
}

OrderedWorkers::~OrderedWorkers() { stop_and_join(); }

void OrderedWorkers::stop_and_join() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->cv.notify_all();
  for (std::thread& t : state_->threads) t.join();
}

std::optional<size_t> OrderedWorkers::next() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  if (s.taken > 0 && s.released < s.taken) {
    s.released = s.taken;  // the consumer moved the previous result out
    s.cv.notify_all();
  }
  const size_t k = s.taken;
  State::Slot& slot = s.slots[k % s.window];
  auto ready = [&] { return (slot.job == k && slot.done) || k >= s.end; };
  if (!s.timeout) {
    s.cv.wait(lock, ready);
  } else if (!s.cv.wait_for(lock, *s.timeout, ready)) {
    throw Error("data loader: no batch from the workers within the timeout of " + std::to_string(s.timeout->count()) + " ms");
  }
  if (slot.job != k || !slot.done) return std::nullopt;
  s.taken = k + 1;
  if (slot.error) std::rethrow_exception(slot.error);
  return k;
}

}  // namespace locus::detail
