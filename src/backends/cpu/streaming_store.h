#pragma once
// Non-temporal stores for results larger than the last-level cache. See Note [Streaming stores].

#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "src/ops/kernel_table.h"
#include "locus/export.h"

// Note [Streaming stores]
// An ordinary store to a line that is not cached first reads it (read-for-ownership), so
// c = a + b over arrays larger than the cache moves 16 bytes per element, not 12. A result that
// cannot stay in the last-level cache anyway is better written with non-temporal stores, which
// skip that read and do not evict the inputs: measured on the 2-core Zen 4 guest, 16M floats,
// add 39.5 -> 50.9 GB/s, relu into another tensor 43.8 -> 85.9 GB/s, copy 50.6 -> 84.9 GB/s.
// In-place ops gain nothing (the line was just read) and keep ordinary stores. A run computes
// into a small buffer in L1 that is then streamed out, so the op's own loop stays the one the
// compiler vectorizes; each thread fences its streamed stores before its part of the parallel
// region ends, so the result is visible to every thread after the op returns.

// Exported for Locus's tests (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::cpu {

/// Bytes of output from which contiguous kernels stream their stores: the last-level cache's
/// size (sysconf), 32 MiB where the system does not say.
int64_t streaming_store_bytes() noexcept;

/// True when `it` (operand 0 the output) is contiguous, its output is at least
/// streaming_store_bytes() and no input is the output itself.
bool streams_output(const ops::StridedIter& it) noexcept;

/// Copies `bytes` from `src` (any alignment) to `dst`, which is 32-byte aligned, with
/// non-temporal stores where the CPU has them.
inline void stream_copy(void* dst, const void* src, size_t bytes) noexcept {
#if defined(__AVX__)
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
  if (i < bytes) std::memcpy(d + i, s + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Orders this thread's streamed stores before what follows.
inline void stream_fence() noexcept {
#if defined(__AVX__)
  _mm_sfence();
#endif
}

/// Calls body(dst, first, count), which must write elements [first, first + count) of the
/// result to dst[0, count): straight into `out` when not `stream`, else into an L1 buffer that
/// is then streamed to `out` (the unaligned head and the tail go straight in).
template <class Out, class Body>
void write_run(Out* out, int64_t n, bool stream, Body&& body) {
  if (!stream || n <= 0) {
    body(out, int64_t{0}, n);
    return;
  }
  // 1 KiB: measured against 4 KiB on 16M-float adds, 54-56 against 40-50 GB/s (the smaller
  // buffer stays in L1 beside the inputs' lines; a direct streaming store reaches 56-59).
  constexpr int64_t kBlock = 1024 / static_cast<int64_t>(sizeof(Out));
  alignas(64) Out buffer[kBlock];
  int64_t head = static_cast<int64_t>((32 - reinterpret_cast<uintptr_t>(out) % 32) % 32 / sizeof(Out));
  if (reinterpret_cast<uintptr_t>(out) % sizeof(Out) != 0 || head > n) head = n;  // cannot align: plain stores
  body(out, int64_t{0}, head);
  int64_t i = head;
  for (; i + kBlock <= n; i += kBlock) {
    body(buffer, i, kBlock);
    stream_copy(out + i, buffer, sizeof(buffer));
  }
  if (i < n) body(out + i, i, n - i);
  stream_fence();
}

}  // namespace locus::cpu

LOCUS_API_END
