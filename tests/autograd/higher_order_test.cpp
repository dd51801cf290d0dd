// Second derivatives (create_graph) against PyTorch 1.13's values (higher_order_cases.h, from
// make_higher_order_cases.py): a Hessian-vector product, WGAN-GP gradient penalties through a
// linear + layer_norm critic and a convolutional one (fused kernels: their double backward
// recomputes the composite path), the losses' and softmax's second derivatives; and the named
// refusal of a fused kernel without a double backward.

#include "tests/autograd/higher_order_cases.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

Tensor wave(const Shape& shape, double a, double b) {
  return sin(arange(shape.numel(), TensorOptions().dtype(kFloat64)) * a + b).reshape(shape);
}

TEST(HigherOrder, HessianVectorProductOfAnMlp) {
  const Tensor x = wave({2, 3}, 0.5, 0.3);
  const Tensor w1 = wave({4, 3}, 0.37, 0.1).requires_grad_(), b1 = wave({4}, 0.9, 0.2).requires_grad_();
  const Tensor w2 = wave({1, 4}, 1.3, 0.4).requires_grad_();
  const Tensor v = wave({4, 3}, 0.21, 0.5);
  const Tensor loss = linear(tanh(linear(x, w1, b1)), w2).pow(2).sum();
  const Tensor g = autograd::grad({loss}, {w1}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_TRUE(g.requires_grad());
  const Tensor hvp = autograd::grad({(g * v).sum()}, {w1})[0];
  expect_close(hvp, higher_order_cases::kHvpW1, 1e-10, 1e-12);
}

TEST(HigherOrder, GradientPenaltyOfALinearLayerNormCritic) {
  const Tensor real = wave({3, 5}, 0.7, 0.0), fake = wave({3, 5}, 0.45, 1.0);
  const Tensor alpha = tensor({0.25, 0.5, 0.75}, kFloat64).view({3, 1});
  const Tensor w1 = wave({6, 5}, 0.33, 0.6).requires_grad_(), b1 = wave({6}, 0.8, 0.9).requires_grad_();
  const Tensor ln_w = (1 + 0.1 * wave({6}, 0.5, 0.0)).requires_grad_(), ln_b = (0.1 * wave({6}, 0.6, 0.3)).requires_grad_();
  const Tensor w2 = wave({1, 6}, 1.1, 0.2).requires_grad_();
  const Tensor xi = (alpha * real + (1 - alpha) * fake).requires_grad_();
  const Tensor h = leaky_relu(layer_norm(linear(xi, w1, b1), {6}, ln_w, ln_b), 0.2);
  const Tensor score = linear(h, w2);
  const Tensor gx = autograd::grad({score.sum()}, {xi}, {}, std::nullopt, /*create_graph=*/true)[0];
  const Tensor gp = (norm(gx, 2, {1}) - 1).pow(2).mean();
  gp.backward();
  expect_close(gp.reshape({1}), higher_order_cases::kGpValue, 1e-10, 1e-12);
  expect_close(w1.grad(), higher_order_cases::kGpW1, 1e-8, 1e-10);
  expect_close(b1.grad(), higher_order_cases::kGpB1, 1e-8, 1e-10);
  expect_close(ln_w.grad(), higher_order_cases::kGpLnW, 1e-8, 1e-10);
  // The penalty does not depend on the norm's bias: PyTorch's gradient is zeros (its
  // leaky_relu double backward hands zeros to the bias's path); Locus's backward of leaky_relu
  // reads x only through a comparison, so no gradient reaches the bias at all.
  EXPECT_EQ(higher_order_cases::kGpLnB, std::vector<double>(6, 0.0));
  EXPECT_FALSE(ln_b.grad().defined());
  expect_close(w2.grad(), higher_order_cases::kGpW2, 1e-8, 1e-10);
}

TEST(HigherOrder, GradientPenaltyOfAConvolutionalCritic) {
  const Tensor img = wave({2, 2, 5, 5}, 0.17, 0.0).requires_grad_();
  const Tensor k_w = wave({3, 2, 3, 3}, 0.29, 0.4).requires_grad_(), k_b = wave({3}, 0.7, 0.1).requires_grad_();
  const Tensor out = sigmoid(conv2d(img, k_w, k_b, 1, 1)).sum();
  const Tensor g = autograd::grad({out}, {img}, {}, std::nullopt, true)[0];
  const Tensor penalty = (g * g).sum();
  penalty.backward();
  expect_close(penalty.reshape({1}), higher_order_cases::kConvPenalty, 1e-10, 1e-12);
  expect_close(k_w.grad(), higher_order_cases::kConvW, 1e-8, 1e-10);
  expect_close(k_b.grad(), higher_order_cases::kConvB, 1e-8, 1e-10);
}

TEST(HigherOrder, CrossEntropyAndSoftmaxSecondDerivatives) {
  const Tensor logits = wave({4, 5}, 0.43, 0.2).requires_grad_();
  const Tensor target = tensor({1, 0, 4, 2}, kInt64);
  const Tensor gl = autograd::grad({cross_entropy_loss(logits, target)}, {logits}, {}, std::nullopt, true)[0];
  expect_close(autograd::grad({(gl * gl).sum()}, {logits})[0], higher_order_cases::kCrossEntropySecond, 1e-9, 1e-12);
  const Tensor l2 = wave({3, 4}, 0.61, 0.7).requires_grad_();
  const Tensor gs = autograd::grad({(softmax(l2, 1) * wave({3, 4}, 0.3, 0.0)).sum()}, {l2}, {}, std::nullopt, true)[0];
  expect_close(autograd::grad({(gs * gs).sum()}, {l2})[0], higher_order_cases::kSoftmaxSecond, 1e-9, 1e-12);
}

TEST(HigherOrder, BackwardWithCreateGraphKeepsTheGradientsHistory) {
  const Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  x.pow(3).sum().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  const Tensor g = x.grad();  // 3 x^2, with history
  EXPECT_TRUE(g.requires_grad());
  const Tensor second = autograd::grad({g.sum()}, {x})[0];
  EXPECT_EQ(values(second), (std::vector<double>{6, 12, 18}));
  // x's gradient holds a graph that leads back to x: a cycle, as in PyTorch, which documents
  // it for backward(create_graph=True); clearing the gradient breaks it.
  x.set_grad(Tensor());
}

TEST(HigherOrder, AFusedKernelWithoutADoubleBackwardSaysWhichItIs) {
  // Attention with dropout: its recomputation would draw another mask, so it refuses.
  const Tensor q = wave({1, 2, 4, 8}, 0.3, 0.0).to(kFloat32).requires_grad_();
  const Tensor k = wave({1, 2, 4, 8}, 0.4, 0.5).to(kFloat32), v = wave({1, 2, 4, 8}, 0.6, 0.2).to(kFloat32);
  const Tensor out = scaled_dot_product_attention(q, k, v, {}, 0.5);
  if (!out.grad_fn() || out.grad_fn()->name().find("Flash") == std::string::npos) GTEST_SKIP() << "the fused path declined";
  const Tensor g = autograd::grad({out.sum()}, {q}, {}, std::nullopt, true)[0];
  try {
    g.sum().backward();
    FAIL() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[locus::backward] double backward of ScaledDotProductFlashAttentionForCpuBackward0 is not supported: its "
              "backward is a fused kernel without a differentiable form (docs/autograd.md lists the ops with second "
              "derivatives)");
  }
}

}  // namespace
}  // namespace locus
