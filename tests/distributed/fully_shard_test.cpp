// fully_shard with its ranks as threads of this process: every strategy trains as one process
// of the whole batch does, shard by shard.

#include "locus/distributed/fully_shard.h"
#include "tests/distributed/rank_threads.h"

namespace locus {
namespace {

using distributed::FullyShardOptions;
using distributed::ShardingStrategy;
using testing::values;

nn::Sequential make_mlp(uint64_t seed) {
  manual_seed(seed);
  // 10 -> 16 -> 7 -> 4: rows that 2 and 3 ranks split unevenly.
  return nn::Sequential{nn::Linear(10, 16), nn::ReLU(), nn::Linear(16, 7), nn::Tanh(), nn::Linear(7, 4)};
}

struct Batch {
  Tensor x, y;
};
Batch make_batch() {
  manual_seed(99);
  return {randn({48, 10}), randint(0, 4, {48})};
}

// Shards every Linear, then the root.
void shard_mlp(nn::Sequential& model, std::shared_ptr<distributed::ProcessGroup> g, FullyShardOptions o) {
  for (size_t i = 0; i < model->size(); i += 2) distributed::fully_shard(model[i], g, o);
  distributed::fully_shard(model, g, o);
}

TEST(FullyShard, EveryStrategyTrainsAsOneProcess) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  const Batch d = make_batch();
  auto single = make_mlp(1);
  optim::Adam single_opt(single->parameters(), 0.01);
  std::vector<double> single_losses;
  for (int step = 0; step < 5; ++step) {
    single_opt.zero_grad();
    const Tensor loss = nn::functional::cross_entropy(single(d.x), d.y);
    loss.backward();
    single_opt.step();
    single_losses.push_back(loss.item<double>());
  }
  for (const int ranks : {2, 3})
    for (const auto strategy :
         {ShardingStrategy::FullShard, ShardingStrategy::ShardGradOp, ShardingStrategy::ShardOptimizerState}) {
      SCOPED_TRACE("ranks " + std::to_string(ranks) + ", strategy " + std::to_string(static_cast<int>(strategy)));
      std::vector<nn::Sequential> models;
      for (int r = 0; r < ranks; ++r) models.push_back(make_mlp(1 + static_cast<uint64_t>(r)));  // rank 0's values win
      testing::on_rank_threads(ranks, [&](std::shared_ptr<distributed::ProcessGroup> g) {
        const int r = g->rank();
        auto model = models[static_cast<size_t>(r)];
        shard_mlp(model, g, FullyShardOptions().strategy(strategy));
        optim::Adam opt(model->parameters(), 0.01);
        const int64_t rows = 48 / ranks;
        const Tensor x = d.x.narrow(0, rows * r, rows), y = d.y.narrow(0, rows * r, rows);
        for (int step = 0; step < 5; ++step) {
          opt.zero_grad();
          const Tensor loss = nn::functional::cross_entropy(model(x), y);
          loss.backward();
          opt.step();
        }
        // Each shard holds its rows of what one process trained.
        const auto want = single->named_parameters();
        const auto got = model->named_parameters();
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i].first, want[i].first);
          const Tensor& w = want[i].second;
          const int64_t per = (w.size(0) + ranks - 1) / ranks;
          const int64_t first = std::min<int64_t>(w.size(0), per * r), count = std::min<int64_t>(w.size(0), first + per) - first;
          ASSERT_EQ(got[i].second.size(0), count) << got[i].first;
          const std::vector<double> a = values(got[i].second), b = values(w.narrow(0, first, count));
          for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], 1e-5) << got[i].first << " " << k;
        }
      });
    }
}

}  // namespace
}  // namespace locus
