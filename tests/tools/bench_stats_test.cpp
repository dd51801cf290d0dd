// The statistics `locus bench` prints (Note [Bench rounds]): medians, ranges, and speedups that
// say when the samples cannot tell two devices apart.

#include <gtest/gtest.h>

#include <stdexcept>

#include "tools/locus/bench_stats.h"

namespace locus::cli {
namespace {

TEST(BenchStats, SpreadIsMedianAndRange) {
  const Spread s = spread_of({3.0, 1.0, 9.0, 2.0, 4.0});
  EXPECT_EQ(s.median, 3.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 9.0);
  EXPECT_EQ(s.rounds, 5);
  EXPECT_EQ(spread_of({4.0, 1.0, 2.0, 8.0}).median, 3.0);  // even count: the middle two's mean
  EXPECT_EQ(spread_of({0.5}).median, 0.5);
  EXPECT_THROW(spread_of({}), std::invalid_argument);
  EXPECT_EQ(format_spread(spread_of({0.4, 0.412, 0.52})), "0.412 (0.400-0.520)");
}

TEST(BenchStats, ASpeedupOutsideTheNoiseIsShownAsSuch) {
  const Spread cpu = spread_of({10.0, 9.0, 11.0});
  const Speedup s = speedup_of(cpu, spread_of({5.0, 4.5, 5.5}));
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.low, 9.0 / 5.5);
  EXPECT_DOUBLE_EQ(s.high, 11.0 / 4.5);
  EXPECT_FALSE(s.within_noise);
  EXPECT_EQ(format_speedup(s), "2.00x");
  const Speedup slower = speedup_of(cpu, spread_of({40.0, 41.0, 39.5}));
  EXPECT_FALSE(slower.within_noise);
  EXPECT_EQ(format_speedup(slower), "0.25x");
}

// The case that misled: a device running the CPU's own kernels, one slow CPU sample.
TEST(BenchStats, OverlappingRangesAreWithinNoise) {
  const Spread cpu = spread_of({1.2, 3.8, 1.25, 1.22, 1.3});
  const Spread sim = spread_of({1.21, 1.24, 1.28, 1.9, 1.23});
  const Speedup s = speedup_of(cpu, sim);
  EXPECT_TRUE(s.within_noise);
  EXPECT_EQ(format_speedup(s), "~1.0x (within noise)");
  // Touching ranges overlap too.
  EXPECT_TRUE(speedup_of(spread_of({2.0, 3.0}), spread_of({1.0, 2.0})).within_noise);
  EXPECT_FALSE(speedup_of(spread_of({2.0, 3.0}), spread_of({1.0, 1.99})).within_noise);
}

}  // namespace
}  // namespace locus::cli
