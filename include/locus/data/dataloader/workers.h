#pragma once
/// \file dataloader/workers.h
/// The worker engine both data loaders run their batches on. An implementation detail of the
/// loaders, public only because StatelessDataLoader is a template.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>

namespace locus::detail {

/// Runs the jobs 0, 1, 2, ... of one epoch on worker threads, at most `window` of them ahead of
/// the consumer, and lets the consumer take them strictly in order. The caller keeps each
/// job's input and result in a ring of `window` slots (job k in slot k % window): a slot is
/// reused only once the consumer has asked for the job after the one that held it.
class OrderedWorkers {
 public:
  /// `claim(k)` draws job k's input (a sampler's next request) and says whether there is a job
  /// k; it runs on a worker, one call at a time, in job order, and once it says no the epoch
  /// has its last job. `run(worker, k)` makes job k's result on worker thread `worker` (0 <=
  /// worker < workers); an exception it (or claim) throws is kept and rethrown by next().
  /// ValueError for workers == 0 or window == 0.
  OrderedWorkers(size_t workers, size_t window, std::function<bool(size_t)> claim, std::function<void(size_t, size_t)> run,
                 std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  /// Stops claiming jobs and joins the threads (each finishes the job it is running).
  ~OrderedWorkers();
  OrderedWorkers(const OrderedWorkers&) = delete;
  OrderedWorkers& operator=(const OrderedWorkers&) = delete;

  /// Waits for the next job in order (0 first) and returns its number k once its result is in
  /// slot k % window, or nullopt when the epoch has no more jobs. The consumer must move the
  /// result out before it calls next() again, which lets the slot be reused. When job k threw,
  /// rethrows that exception (job k counts as taken: the next call moves on to job k + 1); when
  /// the timeout passes first, throws Error and the next call waits for the same job again.
  std::optional<size_t> next();

 private:
  void stop_and_join();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace locus::detail

LOCUS_API_END
