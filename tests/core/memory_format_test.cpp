// Memory formats (locus/memory_format.h): the strides each gives, the tests of which a tensor
// has, the copies into one, and the layers that keep a channels-last layout from input to output
// (PyTorch's strides, checked with 1.13: torch.empty(2,3,4,5).contiguous(
// memory_format=torch.channels_last).stride() == (60, 1, 15, 3)).

#include <gtest/gtest.h>

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
  testing::expect_error<ValueError>([&] { (void)x.is_contiguous(MemoryFormat::ChannelsLast3d); },
                                    "[locus::is_contiguous] required rank 5 tensor to use channels_last_3d format, got "
                                    "rank 3");
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

using ChannelsLastLayers = testing::OnEachDevice;

// A residual block (conv, batch norm in training, ReLU, conv, eval-mode batch norm, the residual
// add, ReLU) takes and gives channels-last, and its values and every gradient are those of the
// contiguous run (PyTorch's rule: a convolution's output follows its input's layout).
TEST_P(ChannelsLastLayers, ResidualBlockKeepsChannelsLast) {
  manual_seed(1);
  for (const int64_t side : {5, 9}) {  // under and over the 8x8 outputs that run NHWC in oneDNN
    const Tensor x = randn({2, 16, side, side}).to(dev());
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
    if (dev().is_cpu() || dev().is_sim()) EXPECT_TRUE(cl.is_contiguous(MemoryFormat::ChannelsLast)) << side;
    EXPECT_TRUE(plain.is_contiguous()) << side;
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
