// Note [Collective queue]
// Every rank must issue a group's collectives in the same order, and the host engines (Gloo,
// MPI) run one at a time per group. The caller checks arguments and queues the collective; it
// runs when its turn comes, on the group's worker thread, or on a thread that waits for one
// nobody has started yet (FutureWork below), which then runs it itself, with any queued before
// it, in order. A synchronous collective thus costs no hand-off between threads: on a busy
// machine each wake-up of another thread can cost a scheduler slice, which made a synchronous
// 16 KiB all-reduce 3-4x slower than Gloo called directly. The worker leaves a new collective
// alone for kCallerFirst, so a caller that waits at once gets to run it; an asynchronous one
// (DDP's buckets) starts that much later.

#include "src/distributed/collective_queue.h"

#include "locus/autograd.h"
#include "src/distributed/caller_waits.h"

namespace locus::distributed {
namespace {

// Waits for one collective, running it (and those queued before it) when nobody has started it.
class FutureWork final : public Work {
 public:
  FutureWork(std::shared_future<void> done, std::function<void()> run_mine)
      : done_(std::move(done)), run_mine_(std::move(run_mine)) {}
  void wait() override {
    if (!is_completed()) run_mine_();
    done_.get();
  }
  bool is_completed() override { return done_.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }

 private:
  std::shared_future<void> done_;
  std::function<void()> run_mine_;
};

constexpr auto kCallerFirst = std::chrono::microseconds(200);

}  // namespace

CollectiveQueue::CollectiveQueue(Runner run) : run_(std::move(run)) { worker_ = std::thread([this] { run_worker(); }); }

CollectiveQueue::~CollectiveQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

std::shared_ptr<Work> CollectiveQueue::enqueue(CollectiveCall call, Job job, std::weak_ptr<const void> owner) {
  auto q = std::make_unique<Queued>(Queued{std::move(call), 0, std::move(job), {}, std::chrono::steady_clock::now()});
  std::shared_future<void> done = q->done.get_future().share();
  std::shared_ptr<Work> work;
  {
    std::lock_guard lock(mutex_);
    const uint64_t seq = q->seq = next_seq_;
    // Made before the job is queued: nothing can fail between queueing and returning it.
    work = std::make_shared<FutureWork>(done, [this, owner = std::move(owner), seq] {
      if (auto alive = owner.lock()) run_through(seq);
    });
    queue_.push_back(std::move(q));
    ++next_seq_;
  }
  if (!caller_waits()) wake_.notify_one();
  return work;
}

// Runs queued collectives, in order, on the calling thread while the first queued one's number
// is at most `last` (every one, for the worker); one at a time, whoever runs them. Never called
// from inside a job (it would wait for itself).
void CollectiveQueue::run_through(uint64_t last) {
  for (;;) {
    std::unique_ptr<Queued> q;
    {
      std::unique_lock lock(mutex_);
      // A later collective running means `last` is done: they run in order.
      idle_.wait(lock, [&] { return !running_ || running_seq_ > last; });
      if (queue_.empty() || queue_.front()->seq > last) return;
      q = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      running_seq_ = q->seq;
    }
    execute(*q);
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    idle_.notify_all();
  }
}

void CollectiveQueue::run_worker() {
  NoGradGuard no_grad;  // the worker only moves values
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      const auto age = std::chrono::steady_clock::now() - queue_.front()->queued_at;
      if (!stopping_ && age < kCallerFirst) {
        lock.unlock();
        std::this_thread::sleep_for(kCallerFirst - age);
        continue;
      }
    }
    run_through(UINT64_MAX);
  }
}

void CollectiveQueue::execute(Queued& q) {
  NoGradGuard no_grad;
  try {
    run_(q.call, q.seq, q.job);
    // The job holds its tensors: released before the waiter wakes, so a caller that waited
    // has the memory back, whichever thread ran it.
    q.job = nullptr;
    q.done.set_value();
  } catch (...) {
    q.job = nullptr;
    q.done.set_exception(std::current_exception());
  }
}

}  // namespace locus::distributed
