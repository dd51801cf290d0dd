#pragma once
/// \file storage.h
/// DataPtr (memory plus how to give it back) and Storage (the buffer tensors view into).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "locus/detail/intrusive_ptr.h"
#include "locus/device.h"

namespace locus::detail {

/// Owns one allocation: the pointer, the device it lives on, and the function that frees it.
/// Move-only; the deleter runs exactly once.
class DataPtr {
 public:
  using Deleter = void (*)(void* ctx, void* ptr) noexcept;

  DataPtr() noexcept : device_(DeviceType::CPU, -1) {}
  DataPtr(void* ptr, void* ctx, Deleter free_fn, Device device) noexcept
      : ptr_(ptr), ctx_(ctx), deleter_(free_fn), device_(device) {}
  DataPtr(DataPtr&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), ctx_(std::exchange(o.ctx_, nullptr)),
        deleter_(std::exchange(o.deleter_, nullptr)), device_(o.device_) {}
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      clear();
      ptr_ = std::exchange(o.ptr_, nullptr);
      ctx_ = std::exchange(o.ctx_, nullptr);
      deleter_ = std::exchange(o.deleter_, nullptr);
      device_ = o.device_;
    }
    return *this;
  }
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  ~DataPtr() { clear(); }

  void* get() const noexcept { return ptr_; }
  void* context() const noexcept { return ctx_; }
  /// The function that frees the memory: tells an allocator whether the memory is its own.
  Deleter deleter() const noexcept { return deleter_; }
  Device device() const noexcept { return device_; }

 private:
  void clear() noexcept {
    if (deleter_) deleter_(ctx_, ptr_);
    deleter_ = nullptr;
    ptr_ = ctx_ = nullptr;
  }
  void* ptr_ = nullptr;
  void* ctx_ = nullptr;
  Deleter deleter_ = nullptr;
  Device device_;
};

/// Asynchronous device work still reading or writing a host storage (a non-blocking copy from
/// or into pinned memory). The host waits for it before touching the storage.
class PendingWork {
 public:
  virtual ~PendingWork() = default;
  /// Blocks until the work is complete. Called at most once.
  virtual void wait() = 0;
  /// True when the work is complete (without waiting).
  virtual bool done() noexcept { return false; }
  /// True when the device writes the storage (a copy into it); false when it only reads it
  /// (a copy from it), which other device reads need not wait for.
  virtual bool writes() const noexcept { return true; }
  /// True when the storage's allocator already keeps the memory from reuse until the work is
  /// done (pinned blocks with a recorded stream), so freeing the storage need not wait.
  virtual bool memory_protected() const noexcept { return false; }
};

/// A buffer of bytes on one device, shared by every tensor that views it.
class Storage : public RefCounted {
 public:
  Storage(DataPtr data, size_t nbytes, bool pinned = false)
      : data_(std::move(data)), nbytes_(nbytes), pinned_(pinned) {}

  void* data() const noexcept { return data_.get(); }
  size_t nbytes() const noexcept { return nbytes_; }
  Device device() const noexcept { return data_.device(); }
  bool pinned() const noexcept { return pinned_; }
  const DataPtr& data_ptr() const noexcept { return data_; }
  /// True for memory lent read-only by another library (a DLPack import with the read-only
  /// flag): every write into it is refused (Note [Read-only memory]).
  bool read_only() const noexcept { return read_only_; }
  /// Marks the buffer read-only; done once, before any tensor views it.
  void set_read_only() noexcept { read_only_ = true; }
  /// The version counter every tensor viewing this buffer shares: each write into the buffer
  /// (an in-place or out= op, copy_, fill_, an optimizer's update) adds one, and backward
  /// checks that a tensor saved for it is still at the version it was saved at (Note [Saved
  /// tensors] in src/autograd/saved_tensor.cpp). PyTorch keeps the counter per view family;
  /// a buffer is that family here (docs/autograd.md).
  uint32_t version() const noexcept { return version_.load(std::memory_order_relaxed); }
  void bump_version() noexcept { version_.fetch_add(1, std::memory_order_relaxed); }

  /// Swaps the allocation behind the buffer for `data` of `nbytes` (an empty DataPtr and 0 give
  /// the memory back), leaving every tensor that views the buffer where it is: how fully_shard
  /// frees a gathered parameter that backward still holds, and refills it before backward reads
  /// it (Note [Resharding in place] in src/distributed/fully_shard.cpp). The caller keeps every
  /// tensor that views the buffer from being read while it is empty.
  void replace_data(DataPtr data, size_t nbytes) {
    wait_for_pending_work();
    data_ = std::move(data);
    nbytes_ = nbytes;
  }
  /// Takes the allocation out of the buffer, leaving it empty (the other side of replace_data).
  DataPtr take_data() {
    wait_for_pending_work();
    nbytes_ = 0;
    return std::move(data_);
  }

  /// Marks the buffer as in use by asynchronous device work; see Note [Host reads wait].
  /// Several copies may read it at once (each batch sent from one pinned buffer).
  void set_pending_work(std::unique_ptr<PendingWork> w);
  /// Waits for pending asynchronous work, if any: what the host does before touching the
  /// buffer. Cheap when there is none.
  void wait_for_pending_work() const {
    if (has_pending_.load(std::memory_order_acquire)) wait_slow(/*writes_only=*/false);
  }
  /// Waits only for pending work that writes the buffer: what another device read of it (a
  /// copy from it) must wait for.
  void wait_for_pending_writes() const {
    if (has_pending_.load(std::memory_order_acquire)) wait_slow(/*writes_only=*/true);
  }

  ~Storage() override;

 private:
  void wait_slow(bool writes_only) const;
  DataPtr data_;
  size_t nbytes_;
  bool pinned_;
  bool read_only_ = false;
  std::atomic<uint32_t> version_{0};
  mutable std::atomic<bool> has_pending_{false};
  mutable std::mutex pending_mutex_;
  mutable std::vector<std::unique_ptr<PendingWork>> pending_;
};

}  // namespace locus::detail

LOCUS_API_END
