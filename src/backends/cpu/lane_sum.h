#pragma once
// The CPU norms' sums (batch norm's per channel, layer and RMS norm's per row): kLanes
// interleaved accumulators, which the compiler vectorises, combined in a fixed order, so that a
// sum never depends on the thread count or on timing.

#include <cstdint>

namespace locus::cpu {

/// The accumulators a lane_sum (and layer norm's Welford lanes) keeps.
inline constexpr int kLanes = 8;

/// The sum of f(i) over [0, n), in T: lane k takes i = k, k + kLanes, ...; the tail goes to the
/// first lanes; then the lanes are added pairwise in a fixed tree.
template <class T, class F>
T lane_sum(int64_t n, F&& f) {
  T lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) lanes[k] += f(i + k);
  for (int k = 0; i < n; ++i, ++k) lanes[k] += f(i);
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  return lanes[0];
}

}  // namespace locus::cpu
