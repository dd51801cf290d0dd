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
  for (auto& w : pending_)
    if (!w->memory_protected()) w->wait();
}

void Storage::set_pending_work(std::unique_ptr<PendingWork> w) {
  if (!w) return;
  std::lock_guard lock(pending_mutex_);
  // Finished work goes; unfinished reads stay side by side (they do not conflict). A write
  // (a copy into the buffer) was ordered after everything before it by the caller's wait.
  std::erase_if(pending_, [](const std::unique_ptr<PendingWork>& p) { return p->done(); });
  pending_.push_back(std::move(w));
  has_pending_.store(true, std::memory_order_release);
}

void Storage::wait_slow(bool writes_only) const {
  std::lock_guard lock(pending_mutex_);
  for (auto& w : pending_) {
    if (writes_only && !w->writes()) continue;
    w->wait();
    w.reset();
  }
  std::erase_if(pending_, [](const std::unique_ptr<PendingWork>& p) { return !p; });
  has_pending_.store(!pending_.empty(), std::memory_order_release);
}

}  // namespace locus::detail
