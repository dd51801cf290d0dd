// The README's short tour, the rows added with issue 24: each line as the README writes it,
// with its result checked against what the PyTorch line beside it gives.

#include <gtest/gtest.h>

#include <cmath>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using namespace locus::indexing;
namespace F = locus::nn::functional;

TEST(ReadmeTour, ReductionsSortingAndScans) {
  const Tensor x = tensor({{3.0, 1.0, 4.0, 1.5, 5.0, 9.0}, {2.0, 6.0, 5.0, 3.5, 5.5, 0.5}});
  auto [v, i] = x.topk(5);
  testing::expect_close(v, {9, 5, 4, 3, 1.5, 6, 5.5, 5, 3.5, 2});
  EXPECT_EQ(testing::values(i), (std::vector<double>{5, 4, 2, 0, 3, 1, 4, 2, 3, 0}));
  testing::expect_close(x.var({1}), {8.441666603088379, 4.675000190734863});  // PyTorch 1.13's values
  testing::expect_close(logsumexp(x, 1), {9.028024673461914, 6.731837749481201});
  testing::expect_close(x.cumsum(0), {3, 1, 4, 1.5, 5, 9, 5, 7, 9, 5, 10.5, 9.5});
}

TEST(ReadmeTour, IndexingAndMasks) {
  Tensor x = arange(6, TensorOptions().dtype(kFloat32)).reshape({2, 3});
  testing::expect_close(x.index({Slice(), 0}), {0, 3});
  const Tensor mask = gt(x, 3.5);
  x.index_put_({mask}, 0);
  testing::expect_close(x, {0, 1, 2, 3, 0, 0});
  testing::expect_close(x.masked_fill(eq(x, 0), -1e9), {-1e9, 1, 2, 3, -1e9, -1e9});
}

TEST(ReadmeTour, ProductsAndChunks) {
  const Tensor a = ones({2, 2, 3}), b = ones({2, 3, 4});
  testing::expect_close(einsum("bij,bjk->bik", {a, b}), std::vector<double>(16, 3.0));
  EXPECT_TRUE(equal(einsum("bij,bjk->bik", {a, b}), bmm(a, b)));
  const std::vector<Tensor> parts = chunk(ones({2, 8}), 4, 1);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].shape(), Shape({2, 2}));
}

TEST(ReadmeTour, FunctionalModulesInitLossesAndSchedules) {
  testing::expect_close(F::leaky_relu(tensor({-1.0, 2.0}), F::LeakyReLUFuncOptions().negative_slope(0.2)), {-0.2, 2.0});
  nn::ModuleList layers{nn::Linear(4, 3), nn::Linear(3, 1)};
  EXPECT_EQ(layers->size(), 2u);
  Tensor w = empty({3, 4});
  nn::init::kaiming_uniform_(w, 0, nn::init::kFanIn, nn::init::kReLU);
  EXPECT_LE(amax(abs(w)).item<double>(), std::sqrt(6.0 / 4.0));  // bound = gain * sqrt(3 / fan_in)
  const Tensor pos_weight = tensor({2.0F});
  nn::BCEWithLogitsLoss loss_fn(nn::BCEWithLogitsLossOptions().pos_weight(pos_weight));
  // -(2 * 1 * log(sigmoid(0))) = 2 log 2
  EXPECT_NEAR(loss_fn(zeros({1}), ones({1})).item<double>(), 2 * std::log(2.0), 1e-6);
  Tensor p = zeros({1}).requires_grad_();
  optim::SGD optimizer({p}, 0.1);
  optimizer.param_groups()[0].options().set_lr(0.01);
  EXPECT_DOUBLE_EQ(optimizer.param_groups()[0].options().get_lr(), 0.01);
  optim::lr_scheduler::CosineAnnealingLR sched(optimizer, 100);
  optimizer.step();
  sched.step();
  EXPECT_NEAR(sched.get_last_lr()[0], 0.01 * (1 + std::cos(M_PI / 100)) / 2, 1e-15);
}

}  // namespace
}  // namespace locus
