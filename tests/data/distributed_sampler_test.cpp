// DistributedSampler: PyTorch's shards, per-epoch permutations, and a DataLoader over a shard.

#include <algorithm>
#include <numeric>

#include "tests/test_util.h"

namespace locus {
namespace {

using data::DistributedSampler;
using data::DistributedSamplerOptions;

TEST(DistributedSampler, ShardsAsPyTorchDoes) {
  // PyTorch 1.13, DistributedSampler(range(10), 3, r, shuffle=False[, drop_last=True]).
  const std::vector<std::vector<int64_t>> padded = {{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}};
  const std::vector<std::vector<int64_t>> dropped = {{0, 3, 6}, {1, 4, 7}, {2, 5, 8}};
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(DistributedSampler(DistributedSamplerOptions(3, r).shuffle(false)).indices(10), padded[static_cast<size_t>(r)]);
    EXPECT_EQ(DistributedSampler(DistributedSamplerOptions(3, r).shuffle(false).drop_last(true)).indices(10),
              dropped[static_cast<size_t>(r)]);
  }
  try {
    DistributedSampler(DistributedSamplerOptions(3, 3));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "DistributedSampler: invalid rank 3, rank should be in the interval [0, 2]");
  }
}

TEST(DistributedSampler, EveryEpochCoversTheDatasetOnceWithANewOrder) {
  std::vector<int64_t> previous;
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<int64_t> all, first_rank;
    for (int64_t r = 0; r < 4; ++r) {
      DistributedSampler s(DistributedSamplerOptions(4, r).seed(7));
      s.set_epoch(epoch);
      const std::vector<int64_t> mine = s.indices(12);
      EXPECT_EQ(mine.size(), 3u);
      if (r == 0) first_rank = mine;
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expected(12);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(all, expected) << "epoch " << epoch;
    EXPECT_NE(first_rank, previous);
    previous = first_rank;
  }
}

TEST(DistributedSampler, DrivesADataLoader) {
  auto ds = std::make_shared<data::TensorDataset>(arange(10), arange(10));
  auto sampler = std::make_shared<DistributedSampler>(DistributedSamplerOptions(3, 1).shuffle(false));
  data::DataLoader loader(ds, data::DataLoaderOptions(3).sampler(sampler));
  EXPECT_EQ(loader.size(), 2);
  std::vector<double> seen;
  for (const data::Example<>& b : loader)
    for (double v : testing::values(b.target)) seen.push_back(v);
  EXPECT_EQ(seen, (std::vector<double>{1, 4, 7, 0}));
  EXPECT_THROW(data::DataLoader(ds, data::DataLoaderOptions(3).sampler(sampler).shuffle(true)), ValueError);
}

}  // namespace
}  // namespace locus
