// Memory formats (locus/memory_format.h): the strides each gives, the tests of which a tensor
// has, the copies into one, and the layers that keep a channels-last layout from input to output
// (PyTorch's strides, checked with 1.13: torch.empty(2,3,4,5).contiguous(
// memory_format=torch.channels_last).stride() == (60, 1, 15, 3)).

#include <gtest/gtest.h>

#include <vector>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

namespace F = nn::functional;

TEST(MemoryFormat, StridesAsPyTorchLaysThemOut) {
  EXPECT_EQ(strides_for({2, 3, 4, 5}, MemoryFormat::ChannelsLast), Shape({60, 1, 15, 3}));
  EXPECT_EQ(strides_for({2, 3, 4, 5, 6}, MemoryFormat::ChannelsLast3d), Shape({360, 1, 90, 18, 3}));
  EXPECT_EQ(strides_for({2, 3, 4, 5}, MemoryFormat::Contiguous), Shape({60, 20, 5, 1}));
  // A size of 0 still takes a stride as if it were 1 (PyTorch's empty tensors).
  EXPECT_EQ(strides_for({2, 0, 4, 5}, MemoryFormat::ChannelsLast), Shape({20, 1, 5, 1}));
}

TEST(MemoryFormat, ContiguousChannelsLastCopiesOnceAndKeepsTheValues) {
  manual_seed(0);
  const Tensor x = randn({2, 3, 4, 5});
  const Tensor cl = x.contiguous(MemoryFormat::ChannelsLast);
  EXPECT_EQ(cl.strides(), Shape({60, 1, 15, 3}));
  EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_FALSE(cl.is_contiguous());
  EXPECT_FALSE(x.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(cl.suggest_memory_format(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(x.suggest_memory_format(), MemoryFormat::Contiguous);
  EXPECT_TRUE(equal(cl, x));
  // Already channels-last: the same tensor, no copy.
  EXPECT_EQ(cl.contiguous(MemoryFormat::ChannelsLast).data_ptr(), cl.data_ptr());
  // And back.
  const Tensor back = cl.contiguous();
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_TRUE(equal(back, x));
}

TEST(MemoryFormat, OneChannelFitsBothAndSuggestsContiguous) {
  const Tensor x = ones({2, 1, 3, 3});
  EXPECT_TRUE(x.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(x.is_contiguous(MemoryFormat::Contiguous));
  EXPECT_EQ(x.suggest_memory_format(), MemoryFormat::Contiguous);
  // Stored NHWC (strides [9, 1, 3, 1]) it does suggest channels-last, as in PyTorch.
  const Tensor strided = ones({2, 3, 3, 1}).permute({0, 3, 1, 2});
  ASSERT_EQ(strided.strides(), Shape({9, 1, 3, 1}));
  EXPECT_EQ(strided.suggest_memory_format(), MemoryFormat::ChannelsLast);
}

TEST(MemoryFormat, ChannelsLast3d) {
  const Tensor x = arange(2 * 3 * 2 * 2 * 2).reshape({2, 3, 2, 2, 2});
  const Tensor cl = x.contiguous(MemoryFormat::ChannelsLast3d);
  EXPECT_EQ(cl.strides(), Shape({24, 1, 12, 6, 3}));
  EXPECT_EQ(cl.suggest_memory_format(), MemoryFormat::ChannelsLast3d);
  EXPECT_TRUE(equal(cl, x));
}

TEST(MemoryFormat, CloneKeepsOrChoosesTheLayout) {
  const Tensor cl = randn({2, 3, 4, 5}).contiguous(MemoryFormat::ChannelsLast);
  EXPECT_TRUE(cl.clone(MemoryFormat::Preserve).is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(cl.clone().is_contiguous());
  EXPECT_TRUE(cl.clone(MemoryFormat::Contiguous).is_contiguous());
  const Tensor t = randn({5, 4}).t();
  EXPECT_TRUE(t.clone(MemoryFormat::Preserve).is_contiguous());  // not channels-last: contiguous
}

TEST(MemoryFormat, GradientFlowsThroughTheCopy) {
  const Tensor x = randn({2, 3, 2, 2}, TensorOptions().requires_grad(true));
  const Tensor w = arange(24, TensorOptions().dtype(kFloat32)).reshape({2, 3, 2, 2});
  (x.contiguous(MemoryFormat::ChannelsLast) * w).sum().backward();
  EXPECT_TRUE(equal(x.grad(), w));
}

TEST(MemoryFormat, ErrorsNameTheRankAndTheFormat) {
  const Tensor x = ones({2, 3, 4});
  testing::expect_error<ValueError>([&] { (void)x.contiguous(MemoryFormat::ChannelsLast); },
                                    "[locus::contiguous] required rank 4 tensor to use channels_last format, got rank 3");
  // PyTorch's is_contiguous answers instead of raising: false for another rank; Preserve asks
  // plain contiguity.
  EXPECT_FALSE(x.is_contiguous(MemoryFormat::ChannelsLast3d));
  EXPECT_TRUE(x.is_contiguous(MemoryFormat::Preserve));
  EXPECT_FALSE(x.transpose(0, 1).is_contiguous(MemoryFormat::Preserve));
  testing::expect_error<ValueError>([] { (void)is_dense_in({2, 3}, {3}, MemoryFormat::Contiguous); },
                                    "[locus::is_dense_in] 2 sizes but 1 strides");
  testing::expect_error<ValueError>([&] { (void)x.contiguous(MemoryFormat::Preserve); },
                                    "[locus::contiguous] MemoryFormat::Preserve is not a layout contiguous() can make");
}

TEST(MemoryFormat, FactoriesTakeItFromTheOptions) {
  const Tensor e = empty({2, 3, 4, 5}, TensorOptions().memory_format(MemoryFormat::ChannelsLast));
  EXPECT_EQ(e.strides(), Shape({60, 1, 15, 3}));
  const Tensor z = zeros({2, 3, 4, 5}, memory_format(MemoryFormat::ChannelsLast).dtype(kFloat64));
  EXPECT_TRUE(z.is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_EQ(z.dtype(), kFloat64);
  EXPECT_TRUE(equal(z, zeros({2, 3, 4, 5}, kFloat64)));
  const Tensor r = rand({2, 3, 4, 5}, TensorOptions().memory_format(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(r.is_contiguous(MemoryFormat::ChannelsLast));
  // The *_like factories keep the layout of the tensor they copy unless told otherwise (PyTorch's
  // preserve_format default).
  EXPECT_TRUE(empty_like(e).is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(ones_like(e).is_contiguous(MemoryFormat::ChannelsLast));
  EXPECT_TRUE(zeros_like(e, TensorOptions().memory_format(MemoryFormat::Contiguous)).is_contiguous());
  EXPECT_TRUE(empty_like(randn({5, 4}).t()).is_contiguous());
  testing::expect_error<ValueError>(
      [] { (void)empty({2, 3}, TensorOptions().memory_format(MemoryFormat::ChannelsLast)); },
      "[locus::empty] required rank 4 tensor to use channels_last format, got rank 2");
  testing::expect_error<ValueError>(
      [] { (void)zeros({2, 3, 4, 5}, TensorOptions().memory_format(MemoryFormat::Preserve)); },
      "[locus::zeros] MemoryFormat::Preserve is not a layout zeros() can make");
}

// A write whose source overlaps it in part is refused for channels-last views too (their memory
// is one dense range), as PyTorch does; the walk order would otherwise decide the result.
TEST(MemoryFormat, PartlyOverlappingChannelsLastCopyIsRefused) {
  Tensor y = arange(4 * 3 * 2 * 2, TensorOptions().dtype(kFloat32)).reshape({4, 3, 2, 2}).contiguous(MemoryFormat::ChannelsLast);
  const Tensor before = y.clone();
  testing::expect_error<ValueError>(
      [&] { y.narrow(0, 1, 3).copy_(y.narrow(0, 0, 3)); },
      "[locus::copy_] unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
      "single memory location. Please clone() the tensor before performing the operation.");
  EXPECT_TRUE(equal(y, before));
  y.add_(y);  // the same view read and written: fine
  EXPECT_TRUE(equal(y, before * 2));
}

// The channels-last batch norm sums rows in chunks fixed by the shape: the statistics, the
// output and every gradient are the same bits at one thread and at two.
TEST(MemoryFormat, ChannelsLastBatchNormDoesNotDependOnTheThreadCount) {
  manual_seed(3);
  const Tensor x = randn({8, 24, 33, 31}).contiguous(MemoryFormat::ChannelsLast);
  const Tensor w = randn({24}), b = randn({24}), g = randn({8, 24, 33, 31});
  const int threads = get_num_threads();
  std::vector<std::vector<Tensor>> runs;
  for (const int n : {1, 2}) {
    set_num_threads(n);
    std::vector<Tensor> leaves{x.detach().requires_grad_(), w.detach().requires_grad_(), b.detach().requires_grad_()};
    const Tensor y = F::batch_norm(leaves[0], Tensor(), Tensor(),
                                   F::BatchNormFuncOptions().training(true).weight(leaves[1]).bias(leaves[2]));
    EXPECT_TRUE(y.is_contiguous(MemoryFormat::ChannelsLast));
    y.backward(g);
    runs.push_back({y.detach(), leaves[0].grad(), leaves[1].grad(), leaves[2].grad()});
  }
  set_num_threads(threads);
  for (size_t k = 0; k < runs[0].size(); ++k) EXPECT_TRUE(equal(runs[0][k], runs[1][k])) << k;
}

using ChannelsLastLayers = testing::OnEachDevice;

// A residual block (conv, batch norm in training, ReLU, conv, eval-mode batch norm, the residual
// add, ReLU) takes and gives channels-last, and its values and every gradient are those of the
// contiguous run (PyTorch's rule: a convolution's output follows its input's layout).
TEST_P(ChannelsLastLayers, ResidualBlockKeepsChannelsLast) {
  manual_seed(1);
  // Under and over the 64 output pixels from which oneDNN runs NHWC, square and 2 x 32.
  for (const Shape& hw : std::vector<Shape>{{5, 5}, {9, 9}, {2, 32}}) {
    const Tensor x = randn({2, 16, hw[0], hw[1]}).to(dev());
    const Tensor w = randn({32, 16, 3, 3}).to(dev()).mul(0.1), b = randn({32}).to(dev());
    const auto run = [&](const Tensor& input, std::vector<Tensor>* grads) {
      std::vector<Tensor> leaves{input.detach().requires_grad_(), w.detach().requires_grad_(),
                                 b.detach().requires_grad_()};
      Tensor out = F::conv2d(leaves[0], leaves[1], F::Conv2dFuncOptions().padding(1).bias(leaves[2]));
      out = F::batch_norm(out, Tensor(), Tensor(), F::BatchNormFuncOptions().training(true).weight(leaves[2]));
      out = F::conv2d(F::relu(out), leaves[1].transpose(0, 1), F::Conv2dFuncOptions().padding(1));
      const Tensor stats = full({16}, 0.5).to(dev());
      out = F::relu(F::batch_norm(out, stats, stats, F::BatchNormFuncOptions().bias(leaves[2].narrow(0, 0, 16))) + input);
      (out * out).sum().backward();
      for (const Tensor& l : leaves) grads->push_back(l.grad());
      return out;
    };
    std::vector<Tensor> plain_grads, cl_grads;
    const Tensor plain = run(x, &plain_grads);
    const Tensor cl = run(x.contiguous(MemoryFormat::ChannelsLast), &cl_grads);
    if (dev().is_cpu() || dev().is_sim()) EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast)) << hw;
    EXPECT_TRUE(plain.is_contiguous()) << hw;
    testing::expect_close(cl, testing::values(plain), 1e-4, 1e-4);
    for (size_t k = 0; k < plain_grads.size(); ++k)
      testing::expect_close(cl_grads[k], testing::values(plain_grads[k]), 1e-4, 1e-3);
  }
}

// Max pooling keeps channels-last (values and indices, as PyTorch's CPU kernel), and its
// maxima, their positions and the gradient are those of the contiguous run, bit for bit: both
// visit a window in the same order. Overlapping padded windows (3x3, stride 1), the CNNs' 2x2,
// a dilated one, a NaN and ties.
TEST_P(ChannelsLastLayers, MaxPoolKeepsChannelsLast) {
  manual_seed(2);
  Tensor x = randn({2, 5, 7, 6}).round();  // ties
  x.index_put_({0, 1, 2, 3}, NAN);
  x = x.to(dev());
  const std::vector<F::MaxPool2dFuncOptions> windows{F::MaxPool2dFuncOptions(3).stride(1).padding(1),
                                                     F::MaxPool2dFuncOptions(2),
                                                     F::MaxPool2dFuncOptions({2, 3}).stride({1, 2}).dilation(2)};
  for (const F::MaxPool2dFuncOptions& o : windows) {
    const auto run = [&](const Tensor& input, Tensor* grad) {
      const Tensor leaf = input.detach().requires_grad_();
      auto [values, indices] = F::max_pool2d_with_indices(leaf, o);
      (values * arange(values.numel(), TensorOptions().dtype(kFloat32).device(dev())).view(values.shape())).sum().backward();
      *grad = leaf.grad();
      return std::pair{values, indices};
    };
    Tensor plain_grad, cl_grad;
    const auto [plain, plain_at] = run(x, &plain_grad);
    const auto [cl, cl_at] = run(x.contiguous(MemoryFormat::ChannelsLast), &cl_grad);
    if (dev().is_cpu() || dev().is_sim()) {
      EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast));
      EXPECT_TRUE(cl_at.is_contiguous(MemoryFormat::ChannelsLast));
    }
    EXPECT_TRUE(equal(cl.isnan(), plain.isnan()));
    EXPECT_TRUE(equal(cl.nan_to_num(), plain.nan_to_num()));
    EXPECT_TRUE(equal(cl_at, plain_at));
    EXPECT_TRUE(equal(cl_grad, plain_grad));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ChannelsLastLayers, ::testing::ValuesIn(testing::value_devices()),
                         testing::device_test_name);

}  // namespace
}  // namespace locus
