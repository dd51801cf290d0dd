#include "src/runtime/host_memory.h"

#include <sys/mman.h>

#include <fstream>
#include <string>

namespace locus::runtime {

std::pair<uint64_t, uint64_t> host_mem_info() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t value = 0, total = 0, available = 0;
  while (in >> key >> value >> unit) {
    if (key == "MemTotal:") total = value * 1024;
    if (key == "MemAvailable:") available = value * 1024;
  }
  return {available, total};
}

void* HostMemory::allocate(size_t nbytes) noexcept {
  if (capacity_) {
    uint64_t used = used_.load();
    do {
      if (used + nbytes > capacity_) return nullptr;
    } while (!used_.compare_exchange_weak(used, used + nbytes));
  } else {
    used_ += nbytes;
  }
  void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    used_ -= nbytes;
    return nullptr;
  }
  if (nbytes >= (size_t{2} << 20)) madvise(p, nbytes, MADV_HUGEPAGE);
  if (lock_) (void)mlock(p, nbytes);  // best effort: RLIMIT_MEMLOCK may refuse; see docs/memory.md
  return p;
}

void HostMemory::free(void* ptr, size_t nbytes) noexcept {
  if (lock_) munlock(ptr, nbytes);
  munmap(ptr, nbytes);
  used_ -= nbytes;
}

std::pair<uint64_t, uint64_t> HostMemory::mem_get_info() const {
  if (!capacity_) return host_mem_info();
  const uint64_t used = used_.load();
  return {used >= capacity_ ? 0 : capacity_ - used, capacity_};
}

}  // namespace locus::runtime
