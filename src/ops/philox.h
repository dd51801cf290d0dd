#pragma once
// Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"): a counter-based
// generator, so element i of a random tensor depends only on (seed, offset + i). Every backend
// computes the same values without sharing state; the CUDA kernels include this file too.

#include <cstdint>

#if defined(__CUDACC__)
#define LOCUS_HOST_DEVICE __host__ __device__
#else
#define LOCUS_HOST_DEVICE
#endif

namespace locus::runtime {

/// Four random 32-bit words.
struct Philox4 {
  uint32_t w[4];
  LOCUS_HOST_DEVICE uint32_t operator[](int i) const noexcept { return w[i]; }
};

/// Four 32-bit random words for `counter` under `seed`.
LOCUS_HOST_DEVICE inline Philox4 philox4x32(uint64_t seed, uint64_t counter) noexcept {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * c0, p1 = uint64_t{0xCD9E8D57u} * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

}  // namespace locus::runtime
