#pragma once
// An NCCL communicator with its watchdog, and the Work of a collective on it (Note [NCCL
// process group] in nccl_process_group.cpp).

#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gloo/rendezvous/store.h>

#include "locus/distributed.h"
#include "locus/stream.h"
#include "src/distributed/collective_check.h"

namespace locus::distributed {

/// A collective in flight: the event that ends it, and what to say if it never ends.
struct InFlight {
  CollectiveCall call;
  uint64_t seq = 0;
  std::chrono::steady_clock::time_point deadline;
  std::mutex mutex;  ///< an Event has one user at a time: the waiter or the watchdog
  cuda::Event end;

  /// True once the collective's work on the device is done.
  bool finished();
};

/// The communicator, whether it still works, and its watchdog: a thread that looks at the
/// collectives in flight every 5 ms and aborts the communicator when one outlives the timeout or
/// NCCL reports an error, so a hang ends even if nobody waits on the host.
class Communicator {
 public:
  /// `prefixed` is the group's view of `store` (absent ranks are asked of it).
  Communicator(int device, int rank, int size, std::chrono::milliseconds timeout,
               std::shared_ptr<gloo::rendezvous::Store> store, std::shared_ptr<gloo::rendezvous::Store> prefixed);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// Takes over `comm` (initialized) and starts watching it.
  void start(ncclComm_t comm);
  /// The CUDA device index of the communicator.
  int device() const noexcept { return device_; }

  /// The communicator, with the lock that keeps the watchdog from aborting it while the caller
  /// enqueues on it; DistributedError when it was aborted.
  std::pair<ncclComm_t, std::unique_lock<std::mutex>> use();
  /// Aborts the communicator (ending its kernels) and remembers why; `held` is the lock of use().
  void abort(const std::string& why, std::unique_lock<std::mutex>& held);
  /// The same, taking the lock.
  void abort(const std::string& why);
  /// DistributedError naming why, once aborted.
  void throw_if_broken();
  /// Watches `work` until it finishes.
  void track(std::shared_ptr<InFlight> work);

 private:
  void watch();
  std::string look_at(InFlight& w);
  std::string describe_failure(const InFlight& w, const std::string& engine);

  ncclComm_t comm_ = nullptr;  ///< null once aborted
  int device_, rank_, size_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo::rendezvous::Store> store_;     ///< kept alive for `prefixed_`, which refers to it
  std::shared_ptr<gloo::rendezvous::Store> prefixed_;  ///< the group's keys
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string broken_;  ///< why the communicator was aborted; empty while it works
  std::vector<std::shared_ptr<InFlight>> in_flight_;
  std::thread watchdog_;
};

/// wait() orders the caller's current stream after the collective, as PyTorch's NCCL works do,
/// without blocking the host (a DDP step then never waits on the host for its gradients); a
/// barrier's wait also blocks the host until every rank is there.
class NcclWork final : public Work {
 public:
  NcclWork(std::shared_ptr<Communicator> comm, std::shared_ptr<InFlight> work, bool blocks_host)
      : comm_(std::move(comm)), work_(std::move(work)), blocks_host_(blocks_host) {}
  void wait() override;
  bool is_completed() override { return work_->finished(); }

 private:
  std::shared_ptr<Communicator> comm_;
  std::shared_ptr<InFlight> work_;
  bool blocks_host_;
};

}  // namespace locus::distributed
