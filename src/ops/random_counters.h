#pragma once
// The global generator's Philox counters, for fused kernels that draw their own random words
// (fused attention's dropout) from the stream rand() and manual_seed() use.

#include <cstdint>
#include <utility>

namespace locus::ops {

/// Reserves `n` counters of the global generator: its seed and the first counter. Later draws
/// (rand, dropout) start after them, as if rand() had drawn n values.
std::pair<uint64_t, uint64_t> take_random_counters(uint64_t n);

/// Undoes take_random_counters(n) that returned (seed, offset) where nothing has drawn or seeded
/// since (on another thread); otherwise the stream just skips those n counters.
void give_back_random_counters(uint64_t seed, uint64_t offset, uint64_t n);

}  // namespace locus::ops
