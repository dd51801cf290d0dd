// Ranks of a real process group started by `locus run` (tests/locus_run.sh, case process_group):
// init_process_group from nothing but the environment the launcher sets, and the failure the
// launcher exists for, a rank that throws while the others wait for it. Run any other way, they
// skip.

#include <chrono>
#include <cstdlib>
#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

// tests/locus_run.sh sets LOCUS_LAUNCHED_TEST; `locus run` sets the rest.
bool launched() { return std::getenv("LOCUS_LAUNCHED_TEST") != nullptr && std::getenv("LOCUS_STORE") != nullptr; }

TEST(LaunchedByLocusRun, AllReduceOverTheLaunchersStore) {
  if (!launched()) GTEST_SKIP() << "a rank of `locus run` in tests/locus_run.sh";
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  distributed::init_process_group("gloo", distributed::GroupOptions().timeout(std::chrono::seconds(20)));
  const int rank = distributed::get_rank();
  const int size = distributed::get_world_size();
  EXPECT_EQ(rank, std::atoi(std::getenv("RANK")));
  EXPECT_EQ(size, std::atoi(std::getenv("WORLD_SIZE")));
  EXPECT_EQ(distributed::get_local_rank(), std::atoi(std::getenv("LOCAL_RANK")));
  Tensor t = full({2}, rank + 1.0);
  distributed::all_reduce(t);
  const double sum = size * (size + 1) / 2.0;
  EXPECT_EQ(values(t), (std::vector<double>{sum, sum}));
  distributed::destroy_process_group();
}

// Rank 1 fails before joining (loading data, say): the others wait for it in the rendezvous,
// where no closed connection tells them anything, for the default timeout of 30 minutes. Only
// the launcher ends that wait.
TEST(LaunchedByLocusRun, RankOneThrowsWhileTheOthersWaitForIt) {
  if (!launched()) GTEST_SKIP() << "a rank of `locus run` in tests/locus_run.sh";
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  if (std::atoi(std::getenv("RANK")) == 1) throw ValueError("rank 1 gives up before joining");
  distributed::init_process_group();
  FAIL() << "init_process_group returned without rank 1";
}

}  // namespace
}  // namespace locus
