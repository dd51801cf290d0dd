#include "locus/detail/storage.h"

// Note [Host reads wait]
// A non-blocking device-to-host copy returns before the bytes have landed. Instead of trusting
// the user to synchronise (PyTorch's rule, and a classic source of silently wrong numbers),
// the destination storage records the pending copy, and every host read of it (item,
// to_vector, printing, a CPU kernel reading it) waits first. Writers wait too, so a later
// write cannot be overtaken by the copy. The same holds for the pinned source of a
// non-blocking host-to-device copy: a host write into it waits until the device has read it,
// so changing a batch right after sending it cannot corrupt what arrives.

namespace locus::detail {

Storage::~Storage() {
  // The buffer must not go back to a pool while a copy may still use it, unless the pool
  // itself holds the block back until then.
  if (pending_ && !pending_->memory_protected()) pending_->wait();
}

void Storage::set_pending_work(std::unique_ptr<PendingWork> w) {
  if (!w) return;
  std::lock_guard lock(pending_mutex_);
  if (pending_) pending_->wait();
  pending_ = std::move(w);
  has_pending_.store(true, std::memory_order_release);
}

void Storage::wait_slow() const {
  std::lock_guard lock(pending_mutex_);
  if (pending_) {
    pending_->wait();
    pending_.reset();
  }
  has_pending_.store(false, std::memory_order_release);
}

}  // namespace locus::detail
