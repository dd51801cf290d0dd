#pragma once
/// \file intrusive_ptr.h
/// Reference counting stored inside the object: one allocation per tensor instead of the two
/// std::shared_ptr's control block would add, and no extra indirection on the hot path.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <atomic>
#include <cstdint>
#include <utility>

namespace locus::detail {

/// Base for intrusively counted objects. The count starts at zero; intrusive_ptr owns it.
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  /// Current number of owners (racy outside single-threaded use; for tests and identity checks).
  int64_t use_count() const noexcept { return refs_.load(std::memory_order_relaxed); }
  virtual ~RefCounted() = default;

 private:
  template <class T>
  friend class intrusive_ptr;
  mutable std::atomic<int64_t> refs_{0};
};

/// Owning pointer to a RefCounted object.
template <class T>
class intrusive_ptr {
 public:
  intrusive_ptr() noexcept = default;
  explicit intrusive_ptr(T* p) noexcept : p_(p) { retain(); }
  intrusive_ptr(const intrusive_ptr& o) noexcept : p_(o.p_) { retain(); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  intrusive_ptr& operator=(const intrusive_ptr& o) noexcept {
    intrusive_ptr(o).swap(*this);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept {
    intrusive_ptr(std::move(o)).swap(*this);
    return *this;
  }
  ~intrusive_ptr() { release(); }

  T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  void swap(intrusive_ptr& o) noexcept { std::swap(p_, o.p_); }
  void reset() noexcept { intrusive_ptr().swap(*this); }
  friend bool operator==(const intrusive_ptr& a, const intrusive_ptr& b) noexcept { return a.p_ == b.p_; }

 private:
  void retain() noexcept {
    if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() noexcept {
    if (p_ && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
  }
  T* p_ = nullptr;
};

/// Allocates a T and wraps it.
template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>(new T(std::forward<Args>(args)...));
}

}  // namespace locus::detail

LOCUS_API_END
