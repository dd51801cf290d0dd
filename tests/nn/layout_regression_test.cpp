// Issue 38's reports, kept as tests: a convolution's gradients must not depend on the layout of
// its operands. The fused kernel's backward used to read the forward's temporary contiguous copy
// of a transposed input after it was freed (Note [Kernel operands]); between the forward and the
// backward each test allocates and frees NaN-filled buffers of that copy's size, so that a
// backward reading freed memory reads NaN instead of the values it happened to leave behind.

#include <cmath>
#include <functional>

#include "tests/test_util.h"

namespace locus {
namespace {

namespace F = nn::functional;

using LayoutRegression = testing::OnEachDevice;

// Recycles freed blocks of `like`'s size with NaN.
void scribble_over_freed(const Tensor& like) {
  for (int k = 0; k < 4; ++k) {
    Tensor junk = full(like.shape(), NAN, TensorOptions().dtype(like.dtype()).device(like.device()));
    (void)junk;
  }
}

// The gradients of `inputs` after conv(inputs).sum().backward(), with freed memory scribbled on
// between the forward and the backward.
std::vector<Tensor> gradients(const std::function<Tensor(const std::vector<Tensor>&)>& conv, std::vector<Tensor> inputs) {
  for (Tensor& t : inputs) t = t.detach().requires_grad_();
  const Tensor out = conv(inputs).sum();
  for (const Tensor& t : inputs) scribble_over_freed(t);
  out.backward();
  std::vector<Tensor> grads;
  for (const Tensor& t : inputs) grads.push_back(t.grad().cpu());
  return grads;
}

void expect_equal_gradients(const std::vector<Tensor>& strided, const std::vector<Tensor>& dense) {
  ASSERT_EQ(strided.size(), dense.size());
  for (size_t k = 0; k < dense.size(); ++k) {
    const std::vector<double> a = testing::values(strided[k]), b = testing::values(dense[k]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_FALSE(std::isnan(a[i])) << "gradient " << k << " element " << i << " is NaN: read freed memory";
      ASSERT_NEAR(a[i], b[i], 1e-4 * (1 + std::abs(b[i]))) << "gradient " << k << " element " << i;
    }
  }
}

TEST_P(LayoutRegression, Conv2dGradientsOfATransposedInput) {
  manual_seed(0);
  const Tensor x = randn({2, 6, 9, 3}).to(dev()).transpose(1, 3);  // [2, 3, 9, 6], not contiguous
  const Tensor w = randn({5, 3, 3, 2}).to(dev());
  const auto conv = [](const std::vector<Tensor>& in) {
    return F::conv2d(in[0], in[1], F::Conv2dFuncOptions().stride({2, 1}).padding({1, 0}).dilation({1, 2}));
  };
  for (int round = 0; round < 3; ++round)
    expect_equal_gradients(gradients(conv, {x, w}), gradients(conv, {x.contiguous(), w}));
}

TEST_P(LayoutRegression, GroupedStridedConv1dOfNonContiguousOperands) {
  manual_seed(1);
  const Tensor x = randn({2, 11, 4}).to(dev()).transpose(1, 2);     // [2, 4, 11]
  const Tensor w = randn({2, 6, 3}).to(dev()).transpose(0, 1);      // [6, 2, 3]
  const Tensor b = randn({12}).to(dev()).slice(0, 0, std::nullopt, 2);  // [6], stride 2
  const auto conv = [](const std::vector<Tensor>& in) {
    return F::conv1d(in[0], in[1], F::Conv1dFuncOptions().bias(in[2]).stride(2).padding(2).groups(2));
  };
  for (int round = 0; round < 3; ++round)
    expect_equal_gradients(gradients(conv, {x, w, b}), gradients(conv, {x.contiguous(), w.contiguous(), b.contiguous()}));
}

INSTANTIATE_TEST_SUITE_P(Devices, LayoutRegression, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
