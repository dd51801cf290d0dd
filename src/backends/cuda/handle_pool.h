#pragma once
// Library handles (cuBLAS, cuDNN) borrowed per thread and device.
//
// Note [Library handles]
// A cuBLAS or cuDNN handle belongs to one device and must not be used by two threads at once,
// and creating one costs milliseconds and some device memory. Each thread therefore borrows a
// handle per device on first use and returns it to a shared free list when the thread exits,
// so short-lived threads (DataParallel's replicas, a user's worker pool) reuse handles instead
// of leaking them.

#include <mutex>
#include <vector>

#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_streams.h"

namespace locus::cuda_backend {

/// The calling thread's handle of type Handle for `device`, made by Create(device) (with the
/// device active) when no thread has returned one.
template <class Handle, Handle (*Create)(int device)>
class ThreadHandlePool {
 public:
  static Handle get(int device) {
    Handle& h = mine().handles[device];
    if (!h) h = borrow(device);
    return h;
  }

 private:
  struct Shared {
    std::mutex mutex;
    std::vector<Handle> free[kMaxDevices];
  };
  struct Mine {
    Handle handles[kMaxDevices] = {};
    ~Mine() {
      Shared& pool = shared();
      std::lock_guard lock(pool.mutex);
      for (int d = 0; d < kMaxDevices; ++d)
        if (handles[d]) pool.free[d].push_back(handles[d]);
    }
  };
  static Shared& shared() {
    static Shared* pool = new Shared;  // never destroyed: threads may exit after main
    return *pool;
  }
  static Mine& mine() {
    thread_local Mine handles;
    return handles;
  }
  static Handle borrow(int device) {
    Shared& pool = shared();
    {
      std::lock_guard lock(pool.mutex);
      if (!pool.free[device].empty()) {
        const Handle h = pool.free[device].back();
        pool.free[device].pop_back();
        return h;
      }
    }
    activate(device);
    return Create(device);
  }
};

}  // namespace locus::cuda_backend
