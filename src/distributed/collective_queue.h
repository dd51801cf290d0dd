#pragma once
// The order in which the host engines (Gloo, MPI) run a group's collectives: one at a time, as
// they were called, on the group's worker thread or on a thread that waits for one nobody has
// started yet (Note [Collective queue] in collective_queue.cpp).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "locus/distributed.h"
#include "locus/export.h"
#include "src/distributed/collective_check.h"

// Exported for the mpi module (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// A group's collectives in call order, numbered from 0, and the worker thread that runs them.
/// A member of its group, declared last, so that it stops before the state its jobs use goes.
class CollectiveQueue {
 public:
  /// The body of one collective; `seq` is its number in the group.
  using Job = std::function<void(uint64_t seq)>;
  /// Runs one collective: checks what the engine must check, then calls job(seq); throws the
  /// collective's failure, which its Work rethrows.
  using Runner = std::function<void(const CollectiveCall& call, uint64_t seq, const Job& job)>;

  /// A queue whose collectives `run` runs; starts the worker.
  explicit CollectiveQueue(Runner run);
  /// Runs what is still queued, then ends the worker.
  ~CollectiveQueue();
  CollectiveQueue(const CollectiveQueue&) = delete;
  CollectiveQueue& operator=(const CollectiveQueue&) = delete;

  /// Queues collective `call`, whose body is `job`, after every one queued before; the Work
  /// waits for it. `owner` is what holds this queue (the group): the Work keeps it alive while
  /// it runs collectives, and finds it gone when it outlives the group. Nothing can fail
  /// between queueing and returning the Work.
  std::shared_ptr<Work> enqueue(CollectiveCall call, Job job, std::weak_ptr<const void> owner);

 private:
  struct Queued {
    CollectiveCall call;
    uint64_t seq = 0;
    Job job;
    std::promise<void> done;
    std::chrono::steady_clock::time_point queued_at;
  };

  void run_through(uint64_t last);
  void run_worker();
  void execute(Queued& q);

  Runner run_;
  std::mutex mutex_;
  std::condition_variable wake_;  ///< the worker: work was queued, or the queue is stopping
  std::condition_variable idle_;  ///< no collective is running
  bool running_ = false;          ///< a thread is running one (the worker or a waiting caller)
  uint64_t running_seq_ = 0;      ///< the number of the one running, or of the last that ran
  std::deque<std::unique_ptr<Queued>> queue_;
  uint64_t next_seq_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace locus::distributed

LOCUS_API_END
