// The watchdog runs on its own thread with the communicator's device current: CUDA calls on a
// thread with no device set would open a context on device 0, costing every rank of a
// multi-GPU machine memory on GPU 0.

#include "src/distributed/nccl/nccl_communicator.h"

#include <algorithm>

#include "locus/device_guard.h"
#include "locus/errors.h"
#include "src/distributed/gloo/absent_ranks.h"

namespace locus::distributed {

bool InFlight::finished() {
  std::lock_guard lock(mutex);
  return end.query();
}

Communicator::Communicator(int device, int rank, int size, std::chrono::milliseconds timeout,
                           std::shared_ptr<gloo::rendezvous::Store> store, std::shared_ptr<gloo::rendezvous::Store> prefixed)
    : device_(device), rank_(rank), size_(size), timeout_(timeout), store_(std::move(store)), prefixed_(std::move(prefixed)) {}

Communicator::~Communicator() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  if (comm_) {
    DeviceGuard guard(Device(DeviceType::CUDA, device_));
    ncclCommDestroy(comm_);
  }
}

void Communicator::start(ncclComm_t comm) {
  comm_ = comm;
  watchdog_ = std::thread([this] { watch(); });
}

std::pair<ncclComm_t, std::unique_lock<std::mutex>> Communicator::use() {
  std::unique_lock lock(mutex_);
  if (!broken_.empty()) throw DistributedError("process group unusable: " + broken_ + "; create a new group");
  return {comm_, std::move(lock)};
}

void Communicator::abort(const std::string& why, std::unique_lock<std::mutex>& held) {
  (void)held;
  if (!broken_.empty()) return;
  broken_ = why;
  ncclCommAbort(comm_);
  comm_ = nullptr;
}

void Communicator::abort(const std::string& why) {
  std::unique_lock lock(mutex_);
  abort(why, lock);
}

void Communicator::throw_if_broken() { use(); }

void Communicator::track(std::shared_ptr<InFlight> work) {
  std::lock_guard lock(mutex_);
  in_flight_.push_back(std::move(work));
}

void Communicator::watch() {
  DeviceGuard on_device(Device(DeviceType::CUDA, device_));
  std::unique_lock lock(mutex_);
  while (!stopping_ && broken_.empty()) {
    wake_.wait_for(lock, std::chrono::milliseconds(5));
    const std::vector<std::shared_ptr<InFlight>> looking = in_flight_;
    lock.unlock();
    std::string why;
    std::vector<InFlight*> done;
    for (const auto& w : looking) {
      try {
        if (w->finished()) {
          done.push_back(w.get());
          continue;
        }
        why = look_at(*w);
      } catch (const std::exception& e) {  // a CUDA error on the event: the device failed
        why = describe_failure(*w, std::string("CUDA: ") + e.what());
      }
      if (!why.empty()) break;
    }
    lock.lock();
    if (!why.empty()) abort(why, lock);
    std::erase_if(in_flight_, [&](const auto& w) { return std::find(done.begin(), done.end(), w.get()) != done.end(); });
  }
}

// Why `w`, not finished, means the communicator must go; empty while it may still finish.
std::string Communicator::look_at(InFlight& w) {
  ncclResult_t async = ncclSuccess;
  {
    std::lock_guard lock(mutex_);
    if (!comm_) return "";
    ncclCommGetAsyncError(comm_, &async);
  }
  if (async != ncclSuccess && async != ncclInProgress)
    return describe_failure(w, std::string("NCCL: ") + ncclGetErrorString(async));
  if (std::chrono::steady_clock::now() > w.deadline)
    return describe_failure(w, "NCCL: it did not finish, so the communicator was aborted");
  return "";
}

std::string Communicator::describe_failure(const InFlight& w, const std::string& engine) {
  return describe_failed_collective(*prefixed_, w.call, w.seq, rank_, size_, timeout_, engine);
}

void NcclWork::wait() {
  comm_->throw_if_broken();
  {
    std::lock_guard lock(work_->mutex);
    cuda::current_stream(comm_->device()).wait_event(work_->end);
  }
  if (blocks_host_)
    while (!work_->finished()) {
      comm_->throw_if_broken();
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  comm_->throw_if_broken();
}

}  // namespace locus::distributed
