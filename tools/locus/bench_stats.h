#pragma once
// What `locus bench` reports of repeated measurements: the median and the spread of each figure,
// and a speedup that says when it is within the noise. One sample shown as a speedup misled
// (sim:0, which runs the CPU's kernels, once showed "3.13x vs cpu" and 0.76x on the next run).

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace locus::cli {

/// The median and the range of a figure's samples (milliseconds per call, say).
struct Spread {
  double median = 0, min = 0, max = 0;
  int rounds = 0;  ///< how many samples
};

/// The spread of `samples` (at least one; the median of an even count is the mean of the middle
/// two). std::invalid_argument when empty.
inline Spread spread_of(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("spread_of: no samples");
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return {median, samples.front(), samples.back(), static_cast<int>(n)};
}

/// How much faster a figure is than the baseline's (times: lower is faster).
struct Speedup {
  double median = 1;  ///< baseline median / other median
  double low = 1;     ///< the worst case the ranges allow: baseline min / other max
  double high = 1;    ///< the best case: baseline max / other min
  /// The two ranges overlap: the samples cannot tell the two apart.
  bool within_noise = true;
};

/// The speedup of `other` over `baseline`, from the spreads of their times.
inline Speedup speedup_of(const Spread& baseline, const Spread& other) {
  Speedup s;
  s.median = baseline.median / other.median;
  s.low = baseline.min / other.max;
  s.high = baseline.max / other.min;
  s.within_noise = baseline.min <= other.max && other.min <= baseline.max;
  return s;
}

/// "3.13x", or "~1.0x (within noise)" when the ranges overlap.
inline std::string format_speedup(const Speedup& s) {
  char buf[48];
  if (s.within_noise) std::snprintf(buf, sizeof buf, "~%.1fx (within noise)", s.median);
  else std::snprintf(buf, sizeof buf, "%.2fx", s.median);
  return buf;
}

/// "0.412 (0.400-0.520)": median, then the range.
inline std::string format_spread(const Spread& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f (%.3f-%.3f)", s.median, s.min, s.max);
  return buf;
}

}  // namespace locus::cli
