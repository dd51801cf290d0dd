// Note [Thread budget]: how many threads CPU kernels use as the machine's load changes, and
// set_num_threads.

#include "src/backends/cpu/thread_budget.h"
#include "tests/test_util.h"

namespace locus {
namespace {

// Runs `samples` samples of the same load; returns the budget after them.
int after_samples(int samples, int runnable, int cpus, int current, int ceiling, int& down, int& up) {
  for (int i = 0; i < samples; ++i) current = cpu::next_thread_budget(runnable, cpus, current, ceiling, down, up);
  return current;
}

TEST(ThreadBudget, AQuietMachineKeepsEveryThread) {
  int down = 0, up = 0;
  // Locus's two threads are the only runnable ones on 2 cores (or one is asleep).
  EXPECT_EQ(after_samples(20, 2, 2, 2, 2, down, up), 2);
  EXPECT_EQ(after_samples(20, 1, 2, 2, 2, down, up), 2);
}

TEST(ThreadBudget, OneBusyNeighbourOnTwoCoresLeavesOneThreadAfterTwoSamples) {
  int down = 0, up = 0;
  EXPECT_EQ(cpu::next_thread_budget(3, 2, 2, 2, down, up), 2);  // one sample may be a burst
  EXPECT_EQ(cpu::next_thread_budget(3, 2, 2, 2, down, up), 1);
  // Still loaded: Locus's one thread plus the neighbour (and its last spinning worker).
  EXPECT_EQ(after_samples(50, 2, 2, 1, 2, down, up), 1);
  EXPECT_EQ(after_samples(50, 3, 2, 1, 2, down, up), 1);
}

TEST(ThreadBudget, TheThreadsComeBackAfterFiveQuietSamples) {
  int down = 0, up = 0;
  EXPECT_EQ(after_samples(4, 1, 2, 1, 2, down, up), 1);
  EXPECT_EQ(cpu::next_thread_budget(1, 2, 1, 2, down, up), 2);
  // A loaded sample in between starts the count again.
  down = up = 0;
  EXPECT_EQ(after_samples(4, 1, 2, 1, 2, down, up), 1);
  EXPECT_EQ(cpu::next_thread_budget(2, 2, 1, 2, down, up), 1);
  EXPECT_EQ(after_samples(4, 1, 2, 1, 2, down, up), 1);
  EXPECT_EQ(cpu::next_thread_budget(1, 2, 1, 2, down, up), 2);
}

TEST(ThreadBudget, TheBudgetIsTheCoresOthersLeaveBetweenOneAndTheCeiling) {
  int down = 0, up = 0;
  EXPECT_EQ(after_samples(2, 5, 4, 4, 4, down, up), 3);    // 4 cores, 1 neighbour
  EXPECT_EQ(after_samples(10, 4, 4, 3, 4, down, up), 3);   // stable there
  EXPECT_EQ(after_samples(2, 40, 4, 3, 4, down, up), 1);   // never below one
  EXPECT_EQ(after_samples(10, 1, 64, 1, 4, down, up), 4);  // never above the ceiling
}

TEST(ThreadBudget, ALoweredCeilingTakesEffectAtOnce) {
  int down = 0, up = 0;
  EXPECT_EQ(cpu::next_thread_budget(1, 8, 8, 2, down, up), 2);
}

TEST(ThreadBudget, SetNumThreadsSetsTheCeiling) {
  const int before = get_num_threads();
  EXPECT_GE(before, 1);
  try {
    set_num_threads(0);
    ADD_FAILURE() << "set_num_threads(0) did not throw";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "set_num_threads: the number of threads must be at least 1, got 0");
  }
  EXPECT_EQ(get_num_threads(), before);
  set_num_threads(1);
  EXPECT_EQ(get_num_threads(), 1);
  EXPECT_EQ(cpu::threads_now(), 1);
  // Kernels compute the same on one thread: a parallel-sized sum and product.
  const Tensor a = arange(1 << 20, kFloat64), m = rand({300, 300}, kFloat64);
  const double sum_one = a.sum().item<double>();
  const Tensor mm_one = matmul(m, m);
  set_num_threads(before);
  EXPECT_EQ(get_num_threads(), before);
  EXPECT_EQ(sum_one, a.sum().item<double>());
  EXPECT_LT((mm_one - matmul(m, m)).abs().max().item<double>(), 1e-9);
  EXPECT_EQ(sum_one, 0.5 * double(1 << 20) * double((1 << 20) - 1));
}

}  // namespace
}  // namespace locus
