#pragma once
// The calling thread's handling of denormal (subnormal) floats. See Note [Denormals].

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

// Note [Denormals]
// Arithmetic that reads or writes a denormal float takes a microcode assist on x86 (~100
// cycles instead of ~4). Adam's moment estimates of a weight whose gradient stays zero (the
// always-black border pixels feeding an MLP's first layer) decay geometrically and reach
// denormal range after ~800 steps; from then on every update of them is slow, and the MLP's
// epochs after the first ran 1.7x slower. Values that small cannot change a float32 weight,
// so optimizers run their update with flush-to-zero and denormals-are-zero set (x86 MXCSR
// FTZ|DAZ, ARM FPCR.FZ) and restore the caller's mode afterwards: user code keeps IEEE
// behaviour unless it asks for flushing with set_flush_denormal(true), as in PyTorch.
// parallel_for runs every chunk under the mode of the thread that launched it, so a kernel
// computes the same on worker threads as on the caller.

namespace locus::detail {

/// The bits of the calling thread's floating-point control register that flush denormals
/// (0 where the architecture has none Locus knows).
inline uint32_t flush_bits() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr() & 0x8040u;  // FTZ (bit 15) | DAZ (bit 6)
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return static_cast<uint32_t>(fpcr & (uint64_t{1} << 24));  // FZ
#else
  return 0;
#endif
}

/// Sets the calling thread's flush bits to `bits` (a value flush_bits() returned).
inline void set_flush_bits(uint32_t bits) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  const uint32_t csr = _mm_getcsr();
  if ((csr & 0x8040u) != bits) _mm_setcsr((csr & ~0x8040u) | bits);
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  const uint64_t want = (fpcr & ~(uint64_t{1} << 24)) | bits;
  if (want != fpcr) __asm__ __volatile__("msr fpcr, %0" : : "r"(want));
#else
  (void)bits;
#endif
}

/// The flush bits that flush every denormal input and result (0 where unsupported).
inline constexpr uint32_t kFlushAll =
#if defined(__x86_64__) || defined(__i386__)
    0x8040u;
#elif defined(__aarch64__)
    uint32_t{1} << 24;
#else
    0u;
#endif

/// Runs a scope under the given flush bits and restores the thread's own on exit.
class FlushBitsScope {
 public:
  explicit FlushBitsScope(uint32_t bits) noexcept : saved_(flush_bits()) { set_flush_bits(bits); }
  ~FlushBitsScope() { set_flush_bits(saved_); }
  FlushBitsScope(const FlushBitsScope&) = delete;
  FlushBitsScope& operator=(const FlushBitsScope&) = delete;

 private:
  uint32_t saved_;
};

/// Flushes denormals for the scope (an optimizer's update; Note [Denormals]).
class FlushDenormalsGuard : public FlushBitsScope {
 public:
  FlushDenormalsGuard() noexcept : FlushBitsScope(kFlushAll) {}
};

}  // namespace locus::detail
