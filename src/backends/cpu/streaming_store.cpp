// When the CPU kernels stream their stores (Note [Streaming stores]).

#include "src/backends/cpu/streaming_store.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace locus::cpu {

namespace {

// The last-level cache this CPU sees, from sysfs ("32768K"), else sysconf; 0 when unknown.
int64_t last_level_cache_bytes() {
  if (std::FILE* f = std::fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r")) {
    long long value = 0;
    char unit = 0;
    const int got = std::fscanf(f, "%lld%c", &value, &unit);
    std::fclose(f);
    if (got >= 1 && value > 0) return unit == 'M' ? value << 20 : unit == 'K' ? value << 10 : value;
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc > 0) return llc;
#endif
  return 0;
}

}  // namespace

int64_t streaming_store_bytes() noexcept {
  // At most 64 MiB: a guest may be told its host's whole-socket cache (sysconf says 384 MiB on
  // the 2-vCPU Zen 4 guest whose sysfs says 32 MiB), which no two cores get.
  static const int64_t bytes = [] {
    const int64_t llc = last_level_cache_bytes();
    constexpr int64_t kCap = int64_t{64} << 20;
    return llc > 0 ? std::min(llc, kCap) : int64_t{32} << 20;
  }();
  return bytes;
}

bool streams_output(const ops::StridedIter& it) noexcept {
  if (!it.contiguous() || it.numel * static_cast<int64_t>(itemsize(it.dtypes[0])) < streaming_store_bytes()) return false;
  for (int k = 1; k < it.noperands; ++k)
    if (it.data[k] == it.data[0]) return false;
  return true;
}

}  // namespace locus::cpu
