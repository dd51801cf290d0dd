// The fused LSTM and GRU steps (Note [Fused recurrent cells]): the CPU kernel against the
// composition (sim configured without "lstm_cell" and "gru_cell") through the cells and the
// layers, values and every gradient, float32 and float64, odd hidden sizes (the vector loops'
// tails); the nodes they record; the version check on the states they save; the second
// derivative through the fused node; float16 and bfloat16 computing in float32.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_error;
using testing::values;

// Runs `f` on `device` ("cpu": the fused kernel; "sim:0" with the cells unsupported: the
// composition) and returns what it returns. Callers run the fused side first, named: `to(cpu)`
// hands back a cpu tensor itself, so the inputs are detached copies on each side.
template <class F>
std::vector<std::vector<double>> on_path(bool fused, F&& f) {
  const sim::Config original = sim::config();
  if (fused) return f(Device("cpu"));
  sim::Config lacking = original;
  lacking.unsupported_ops = {"lstm_cell", "gru_cell"};
  sim::configure(lacking);
  std::vector<std::vector<double>> out = f(Device("sim:0"));
  sim::configure(original);
  return out;
}

void expect_same(const std::vector<std::vector<double>>& fused, const std::vector<std::vector<double>>& composed,
                 double tol, const std::string& what) {
  ASSERT_EQ(fused.size(), composed.size()) << what;
  for (size_t r = 0; r < fused.size(); ++r) {
    ASSERT_EQ(fused[r].size(), composed[r].size()) << what << " result " << r;
    for (size_t i = 0; i < fused[r].size(); ++i)
      ASSERT_NEAR(fused[r][i], composed[r][i], tol * (1 + std::abs(composed[r][i])))
          << what << " result " << r << " at " << i;
  }
}

// Every parameter's gradient and the inputs' of one module, in order.
std::vector<std::vector<double>> gradients(const nn::Module& m, std::initializer_list<const Tensor*> inputs) {
  std::vector<std::vector<double>> out;
  for (const Tensor& p : m.parameters()) out.push_back(values(p.grad()));
  for (const Tensor* t : inputs) out.push_back(values(t->grad()));
  return out;
}

TEST(FusedRecurrentCells, LstmCellKernelAgreesWithTheComposition) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-6;
    for (int64_t hidden : {1, 13, 64}) {
      manual_seed(static_cast<uint64_t>(hidden));
      nn::LSTMCell cell(5, hidden);
      cell->to(dtype);
      const TensorOptions o = TensorOptions().dtype(dtype);
      const Tensor x = randn({7, 5}, o), h0 = randn({7, hidden}, o), c0 = mul(randn({7, hidden}, o), 2.0);
      const Tensor wh = randn({7, hidden}, o), wc = randn({7, hidden}, o);
      const auto run = [&](Device dev) {
        nn::LSTMCell copy = std::dynamic_pointer_cast<nn::LSTMCellImpl>(cell->clone(dev));
        const Tensor xx = x.to(dev).detach().requires_grad_(), hh = h0.to(dev).detach().requires_grad_(), cc = c0.to(dev).detach().requires_grad_();
        const auto [h, c] = copy(xx, std::make_tuple(hh, cc));
        (mul(h, wh.to(dev)).sum() + mul(c, wc.to(dev)).sum()).backward();
        std::vector<std::vector<double>> out{values(h), values(c)};
        for (auto& g : gradients(*copy, {&xx, &hh, &cc})) out.push_back(g);
        return out;
      };
      const auto fused = on_path(true, run), composed = on_path(false, run);
      expect_same(fused, composed, tol, "LSTMCell hidden " + std::to_string(hidden));
    }
  }
}

TEST(FusedRecurrentCells, GruCellKernelAgreesWithTheComposition) {
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-6;
    for (int64_t hidden : {1, 13, 64}) {
      manual_seed(static_cast<uint64_t>(100 + hidden));
      nn::GRUCell cell(5, hidden);
      cell->to(dtype);
      const TensorOptions o = TensorOptions().dtype(dtype);
      const Tensor x = randn({7, 5}, o), h0 = randn({7, hidden}, o), w = randn({7, hidden}, o);
      const auto run = [&](Device dev) {
        nn::GRUCell copy = std::dynamic_pointer_cast<nn::GRUCellImpl>(cell->clone(dev));
        const Tensor xx = x.to(dev).detach().requires_grad_(), hh = h0.to(dev).detach().requires_grad_();
        const Tensor h = copy(xx, hh);
        mul(h, w.to(dev)).sum().backward();
        std::vector<std::vector<double>> out{values(h)};
        for (auto& g : gradients(*copy, {&xx, &hh})) out.push_back(g);
        return out;
      };
      const auto fused = on_path(true, run), composed = on_path(false, run);
      expect_same(fused, composed, tol, "GRUCell hidden " + std::to_string(hidden));
    }
  }
}

// The layers step through the same kernel: a bidirectional two-layer LSTM with projections and
// a packed batch whose sequences end at different steps, and a GRU with initial states.
TEST(FusedRecurrentCells, LayersAgreeWithTheComposition) {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(4, 9).num_layers(2).bidirectional(true).proj_size(3));
  nn::GRU gru(nn::GRUOptions(4, 6).num_layers(2));
  const Tensor x = randn({5, 3, 4}), h0 = randn({2, 3, 6});
  const Tensor lengths = tensor(std::vector<int64_t>{5, 3, 2});
  const auto run = [&](Device dev) {
    auto l = std::dynamic_pointer_cast<nn::LSTMImpl>(lstm->clone(dev));
    auto g = std::dynamic_pointer_cast<nn::GRUImpl>(gru->clone(dev));
    const Tensor xx = x.to(dev).detach().requires_grad_(), hh = h0.to(dev).detach().requires_grad_();
    const auto packed = nn::utils::rnn::pack_padded_sequence(xx, lengths);
    const auto [out, state] = l->forward_with_packed_input(packed);
    const auto [y, hn] = g->forward(xx, hh);
    (mul(out.data(), out.data()).sum() + std::get<1>(state).sum() + mul(y, y).sum() + hn.sum()).backward();
    std::vector<std::vector<double>> result{values(out.data()), values(std::get<0>(state)), values(y)};
    for (auto& grads : gradients(*l, {})) result.push_back(grads);
    for (auto& grads : gradients(*g, {&xx, &hh})) result.push_back(grads);
    return result;
  };
  const auto fused = on_path(true, run), composed = on_path(false, run);
  expect_same(fused, composed, 1e-5, "layers");
}

TEST(FusedRecurrentCells, TheStepsRecordOneNodeEach) {
  manual_seed(4);
  const Tensor c = randn({2, 2}).requires_grad_();
  nn::LSTMCell cell(3, 2);
  const auto [h, c1] = cell(randn({2, 3}), std::make_tuple(randn({2, 2}), c));
  ASSERT_TRUE(h.grad_fn());
  EXPECT_EQ(h.grad_fn()->name(), "UnbindBackward0");
  EXPECT_EQ(c1.grad_fn().get(), h.grad_fn().get());  // one node joins the two states' gradients
  EXPECT_EQ(h.grad_fn()->next_functions()[0].function->name(), "ThnnFusedLstmCellBackward0");
  nn::GRUCell gru(3, 2);
  EXPECT_EQ(gru(randn({2, 3}), c).grad_fn()->name(), "ThnnFusedGruCellBackward0");
  // Without the kernel the steps are the composition (the other side of the tests above).
  const auto names = on_path(false, [&](Device dev) {
    auto l = std::dynamic_pointer_cast<nn::LSTMCellImpl>(cell->clone(dev));
    auto g = std::dynamic_pointer_cast<nn::GRUCellImpl>(gru->clone(dev));
    const Tensor x = randn({2, 3}, TensorOptions().device(dev)), s = c.to(dev);
    const std::string lstm_name = std::get<0>(l->forward(x, std::make_tuple(s, s))).grad_fn()->name();
    const std::string gru_name = g->forward(x, s).grad_fn()->name();
    return std::vector<std::vector<double>>{{lstm_name == "MulBackward0" ? 1.0 : 0.0}, {gru_name == "AddBackward0" ? 1.0 : 0.0}};
  });
  EXPECT_EQ(names, (std::vector<std::vector<double>>{{1.0}, {1.0}}));
}

// The LSTM node reads c and c' at backward: changing c' in place stops the backward with
// PyTorch's message, naming the fused node.
TEST(FusedRecurrentCells, ChangingASavedStateIsCaught) {
  manual_seed(5);
  nn::LSTMCell cell(3, 2);
  auto [h, c] = cell(randn({2, 3}));
  const Tensor loss = h.sum();
  {
    NoGradGuard no_grad;
    c.mul_(2);
  }
  expect_error<ValueError>(
      [&] { loss.backward(); },
      "[locus::backward] one of the variables needed for gradient computation has been modified by an inplace "
      "operation: [torch.FloatTensor [2, 2, 2]], which is output 0 of ThnnFusedLstmCellBackward0, is at version 1; "
      "expected version 0 instead. (It is read by ThnnFusedLstmCellBackward0; modify a clone() instead, or do the "
      "in-place op before the op that reads the tensor.)");
}

// create_graph through the fused nodes differentiates their composition: a gradient penalty
// on the input gives the composed path's second derivative.
TEST(FusedRecurrentCells, SecondDerivativesAreTheCompositions) {
  manual_seed(6);
  nn::LSTMCell lstm(3, 4);
  nn::GRUCell gru(3, 4);
  lstm->to(kFloat64), gru->to(kFloat64);
  const Tensor x = randn({2, 3}, kFloat64);
  const auto run = [&](Device dev) {
    auto l = std::dynamic_pointer_cast<nn::LSTMCellImpl>(lstm->clone(dev));
    auto g = std::dynamic_pointer_cast<nn::GRUCellImpl>(gru->clone(dev));
    const Tensor xx = x.to(dev).detach().requires_grad_();
    const auto [h, c] = l->forward(xx);
    const Tensor y = g->forward(xx, h);
    const Tensor grad_x = autograd::grad({(y * y).sum() + (c * c).sum()}, {xx}, {}, true, true)[0];
    (grad_x * grad_x).sum().backward();
    return gradients(*l, {&xx});
  };
  const auto fused = on_path(true, run), composed = on_path(false, run);
  expect_same(fused, composed, 1e-12, "penalty");
}

// float16 and bfloat16 steps compute in float32 and return the inputs' dtype.
TEST(FusedRecurrentCells, HalfPrecisionComputesInFloat32) {
  manual_seed(7);
  nn::LSTMCell cell(3, 8);
  const Tensor x = randn({4, 3});
  const auto [h32, c32] = cell(x);
  for (DType dtype : {kBFloat16, kFloat16}) {
    auto half = std::dynamic_pointer_cast<nn::LSTMCellImpl>(cell->clone());
    half->to(dtype);
    const auto [h, c] = half->forward(x.to(dtype));
    EXPECT_EQ(h.dtype(), dtype);
    EXPECT_EQ(c.dtype(), dtype);
    const std::vector<double> got = values(h), want = values(h32);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.03) << dtype_name(dtype) << " " << i;
  }
}

}  // namespace
}  // namespace locus
