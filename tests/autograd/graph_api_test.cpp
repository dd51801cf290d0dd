// LibTorch's view of the graph: grad_fn() and next_functions(), hooks, retain_grad,
// backward's retain_graph and inputs, autograd::grad and autograd::backward.

#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_error;
using testing::values;

TEST(GraphApi, GradFnNamesAndEdgesFollowPyTorch) {
  const Tensor x = ones({2, 2}, TensorOptions().requires_grad(true));
  const Tensor y = x + 2;
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward0");
  const Tensor z = y * y * 3;
  EXPECT_EQ(z.grad_fn()->name(), "MulBackward0");
  EXPECT_EQ(z.mean().grad_fn()->name(), "MeanBackward0");
  EXPECT_EQ(x.grad_fn(), nullptr);
  // z = (y * y) * 3: one edge into MulBackward0 (y * y), whose two edges both lead to y's AddBackward0.
  const auto& edges = z.grad_fn()->next_functions();
  ASSERT_EQ(edges.size(), 1u);
  ASSERT_TRUE(edges[0].is_valid());
  const auto& inner = edges[0].function->next_functions();
  ASSERT_EQ(inner.size(), 2u);
  EXPECT_EQ(inner[0].function, y.grad_fn());
  EXPECT_EQ(inner[1].function, y.grad_fn());
  EXPECT_EQ(y.grad_fn()->next_functions()[0].function->name(), "AccumulateGrad");
  // A number operand has no edge; a tensor that needs no gradient has an invalid one.
  const Tensor c = ones({2, 2});
  const Tensor product = x * c;
  const auto& mixed = product.grad_fn()->next_functions();
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_TRUE(mixed[0].is_valid());
  EXPECT_FALSE(mixed[1].is_valid());
}

TEST(GraphApi, SplitChunkAndUnbindRecordOneNodeForTheirPieces) {
  const Tensor x = arange(6, TensorOptions().dtype(kFloat64)).view({2, 3}).requires_grad_();
  const auto pieces = split(x, std::vector<int64_t>{1, 2}, 1);
  EXPECT_EQ(pieces[0].grad_fn()->name(), "SplitWithSizesBackward0");
  EXPECT_EQ(pieces[0].grad_fn(), pieces[1].grad_fn());
  EXPECT_EQ(pieces[1].output_nr(), 1u);
  EXPECT_EQ(chunk(x, 3, 1)[2].grad_fn()->name(), "SplitBackward0");
  const auto rows = unbind(x, 0);
  EXPECT_EQ(rows[1].grad_fn()->name(), "UnbindBackward0");
  (pieces[1] * 2).sum().backward();  // the other piece gets zeros
  (rows[1] * 3).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 2, 2, 3, 5, 5}));
}

TEST(GraphApi, AHookSeesAndMayReplaceTheGradient) {
  const Tensor x = ones({3}, TensorOptions().requires_grad(true));
  const Tensor y = x * 2;
  std::vector<double> seen;
  y.register_hook([&](const Tensor& g) { seen = values(g); });
  const unsigned doubling = y.register_hook([](Tensor g) { return g * 2; });
  (y * 5).sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{5, 5, 5}));  // hooks run in the order they were added
  EXPECT_EQ(values(x.grad()), (std::vector<double>{20, 20, 20}));
  y.remove_hook(doubling);
  x.grad().zero_();
  (y * 5).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{10, 10, 10}));
}

TEST(GraphApi, ALeafsHookRunsBeforeAccumulation) {
  const Tensor w = ones({2}, TensorOptions().requires_grad(true));
  w.register_hook([](const Tensor& g) { return g.clamp(-1, 1); });
  (w * 10).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1, 1}));
  expect_error<ValueError>([] { ones({1}).register_hook([](const Tensor&) {}); },
                           "register_hook: cannot register a hook on a tensor that doesn't require gradient");
}

TEST(GraphApi, RetainGradKeepsANonLeafsGradient) {
  const Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  const Tensor y = x * x;
  EXPECT_FALSE(y.retains_grad());
  y.retain_grad();
  EXPECT_TRUE(y.retains_grad());
  EXPECT_TRUE(x.retains_grad());
  (y * 3).sum().backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(values(y.grad()), (std::vector<double>{3, 3, 3}));
  (y * 3).sum().backward();
  EXPECT_EQ(values(y.grad()), (std::vector<double>{6, 6, 6}));  // accumulates, as a leaf's
  EXPECT_EQ(values(x.grad()), (std::vector<double>{12, 24, 36}));
}

TEST(GraphApi, ASecondBackwardThroughFreedSavedTensorsIsRefused) {
  const Tensor x = tensor({1.0, 2.0}).requires_grad_();
  const Tensor loss = (x * x).sum();
  loss.backward(Tensor(), /*retain_graph=*/true);
  loss.backward();  // retained once: runs again
  EXPECT_EQ(values(x.grad()), (std::vector<double>{4, 8}));
  expect_error<ValueError>([&] { loss.backward(); },
                           "[locus::backward] trying to backward through the graph a second time (or to read saved "
                           "tensors after they were freed): MulBackward0's saved tensors were freed by the first "
                           "backward; pass retain_graph=true to the first backward() or autograd::grad() to run it twice");
  // A graph whose nodes save nothing may run twice, as in PyTorch.
  const Tensor s = (x + 1).sum();
  s.backward();
  s.backward();
}

TEST(GraphApi, BackwardIntoChosenInputsOnly) {
  const Tensor a = tensor({1.0, 2.0}).requires_grad_(), b = tensor({3.0, 4.0}).requires_grad_();
  (a * b).sum().backward(Tensor(), std::nullopt, false, std::vector<Tensor>{a});
  EXPECT_EQ(values(a.grad()), (std::vector<double>{3, 4}));
  EXPECT_FALSE(b.grad().defined());
}

TEST(GraphApi, GradCollectsWithoutTouchingGrad) {
  const Tensor a = tensor({1.0, 2.0}).requires_grad_(), b = tensor({3.0, 4.0}).requires_grad_();
  const Tensor h = a * b;
  const Tensor out = (h * h).sum();
  const auto grads = autograd::grad({out}, {a, h}, {}, /*retain_graph=*/true);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_EQ(values(grads[0]), (std::vector<double>{2 * 3 * 3 * 1, 2 * 4 * 4 * 2}));  // 2 a b^2
  EXPECT_EQ(values(grads[1]), (std::vector<double>{6, 16}));                          // 2 h
  EXPECT_FALSE(a.grad().defined());
  const Tensor unused = tensor({1.0}).requires_grad_();
  expect_error<ValueError>([&] { autograd::grad({out}, {unused}, {}, true); },
                           "[locus::grad] one of the differentiated tensors appears to not have been used in the graph; "
                           "pass allow_unused=true if this is what you want");
  const auto allowed = autograd::grad({out}, {unused}, {}, true, false, /*allow_unused=*/true);
  EXPECT_FALSE(allowed[0].defined());
  expect_error<ValueError>([&] { autograd::grad({out}, {tensor({1.0})}); },
                           "[locus::grad] one of the differentiated tensors does not require grad");
  expect_error<ValueError>([&] { autograd::grad({h}, {a}); },
                           "grad: grad can be implicitly created only for one-element outputs; this one has 2 elements, "
                           "so pass a gradient of shape matching it");
}

TEST(GraphApi, SeveralRootsEachWeighted) {
  const Tensor a = tensor({1.0, 2.0}).requires_grad_();
  const Tensor y1 = a * 3, y2 = a * a;
  autograd::backward({y1, y2}, {tensor({1.0, 0.0}), tensor({0.0, 1.0})}, /*retain_graph=*/true);
  EXPECT_EQ(values(a.grad()), (std::vector<double>{3, 4}));
  const auto g = autograd::grad({y1, y2}, {a}, {tensor({1.0, 1.0}), tensor({1.0, 1.0})});
  EXPECT_EQ(values(g[0]), (std::vector<double>{5, 7}));
}

}  // namespace
}  // namespace locus
