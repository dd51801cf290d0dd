// nn::RNN, LSTM and GRU on CUDA through cuDNN's RNN API (Note [cuDNN RNNs]): the values and
// every gradient against the CPU's step-by-step composition, padded and packed batches,
// bidirectional stacks, an LSTM's projection, float32 and float64; the one node it records and
// its refusal of double backward; dropout between layers and autocast taking the composition.
// Every test skips without a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

struct PassResult {
  std::vector<std::vector<double>> results;  // outputs, then gradients
  std::string node;                          // the output's first node below its views
};

// The first node under `t`'s view and split nodes: the recurrence's own.
std::string recurrence_node(const Tensor& t) {
  std::shared_ptr<autograd::Node> node = t.grad_fn();
  while (node && (node->name() == "ViewBackward0" || node->name() == "SplitWithSizesBackward0" ||
                  node->name() == "TransposeBackward0" || node->name() == "UnsafeViewBackward0"))
    node = node->next_functions()[0].function;
  return node ? node->name() : "";
}

void expect_close(const PassResult& got, const PassResult& want, double tol, const std::string& what) {
  ASSERT_EQ(got.results.size(), want.results.size()) << what;
  for (size_t r = 0; r < got.results.size(); ++r) {
    ASSERT_EQ(got.results[r].size(), want.results[r].size()) << what << " result " << r;
    for (size_t i = 0; i < got.results[r].size(); ++i)
      ASSERT_NEAR(got.results[r][i], want.results[r][i], tol * (1 + std::abs(want.results[r][i])))
          << what << " result " << r << " at " << i;
  }
}

// One forward and backward of `layer` (a clone on `device`) over x [T, B, F] with initial
// states, padded or packed with `lengths`.
template <class Layer>
PassResult run(const Layer& layer, Device device, const Tensor& x, const Tensor& h0, const Tensor& c0, const Tensor& lengths) {
  auto m = std::dynamic_pointer_cast<typename Layer::ContainedType>(layer->clone(device));
  const Tensor xx = x.to(device).detach().requires_grad_(), hh = h0.to(device).detach().requires_grad_();
  const Tensor cc = c0.defined() ? c0.to(device).detach().requires_grad_() : Tensor();
  Tensor y, hn, cn;
  if constexpr (std::is_same_v<Layer, nn::LSTM>) {
    if (lengths.defined()) {
      const auto [packed, state] = m->forward_with_packed_input(nn::utils::rnn::pack_padded_sequence(xx, lengths),
                                                                std::make_tuple(hh, cc));
      y = packed.data(), hn = std::get<0>(state), cn = std::get<1>(state);
    } else {
      const auto [out, state] = m->forward(xx, std::make_tuple(hh, cc));
      y = out, hn = std::get<0>(state), cn = std::get<1>(state);
    }
  } else if (lengths.defined()) {
    const auto [packed, state] = m->forward_with_packed_input(nn::utils::rnn::pack_padded_sequence(xx, lengths), hh);
    y = packed.data(), hn = state;
  } else {
    std::tie(y, hn) = m->forward(xx, hh);
  }
  PassResult r;
  r.node = recurrence_node(y);
  const Tensor wy = linspace(-1.0, 1.0, y.numel(), TensorOptions().dtype(y.dtype()).device(device)).view(y.shape());
  Tensor loss = mul(y, wy).sum() + mul(hn, hn).sum();
  if (cn.defined()) loss = loss + cn.sum();
  loss.backward();
  for (const Tensor& t : {y, hn, cn})
    if (t.defined()) r.results.push_back(values(t.cpu()));
  for (const Tensor& p : m->parameters()) r.results.push_back(values(p.grad().cpu()));
  for (const Tensor& t : {xx, hh, cc})
    if (t.defined()) r.results.push_back(values(t.grad().cpu()));
  return r;
}

TEST(CudnnRecurrence, LayersAgreeWithTheCpuComposition) {
  REQUIRE_CUDA();
  const Device cuda("cuda:0");
  const Tensor lengths = tensor(std::vector<int64_t>{6, 4, 4, 1});
  for (DType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat64 ? 1e-10 : 2e-4;
    const TensorOptions o = TensorOptions().dtype(dtype);
    for (bool packed : {false, true}) {
      const std::string what = std::string(dtype_name(dtype)) + (packed ? " packed" : " padded");
      manual_seed(1);
      const Tensor x = randn({6, 4, 5}, o);
      const Tensor l = packed ? lengths : Tensor();
      nn::LSTM lstm(nn::LSTMOptions(5, 7).num_layers(2).bidirectional(true).proj_size(3));
      lstm->to(dtype);
      const Tensor h0 = randn({4, 4, 3}, o), c0 = randn({4, 4, 7}, o);
      const PassResult got = run(lstm, cuda, x, h0, c0, l), want = run(lstm, Device("cpu"), x, h0, c0, l);
      EXPECT_EQ(got.node, "CudnnRnnBackward0") << what;
      expect_close(got, want, tol, "LSTM " + what);
      nn::GRU gru(nn::GRUOptions(5, 6).num_layers(2).bidirectional(true));
      gru->to(dtype);
      const Tensor g0 = randn({4, 4, 6}, o);
      const PassResult gru_got = run(gru, cuda, x, g0, Tensor(), l), gru_want = run(gru, Device("cpu"), x, g0, Tensor(), l);
      EXPECT_EQ(gru_got.node, "CudnnRnnBackward0") << what;
      expect_close(gru_got, gru_want, tol, "GRU " + what);
      for (auto nonlinearity : {nn::RNNNonlinearity(nn::kTanh), nn::RNNNonlinearity(nn::kReLU)}) {
        nn::RNN rnn(nn::RNNOptions(5, 4).num_layers(3).nonlinearity(nonlinearity).bias(false));
        rnn->to(dtype);
        const Tensor r0 = randn({3, 4, 4}, o);
        expect_close(run(rnn, cuda, x, r0, Tensor(), l), run(rnn, Device("cpu"), x, r0, Tensor(), l), tol,
                     "RNN " + what);
      }
    }
  }
}

// cuDNN's backward is a kernel without a differentiable form, as PyTorch's: a gradient penalty
// through it says so by name. Dropout between layers in training, and autocast, take the
// step-by-step composition, which records its steps.
TEST(CudnnRecurrence, DoubleBackwardDropoutAndAutocast) {
  REQUIRE_CUDA();
  const Device cuda("cuda:0");
  manual_seed(2);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  lstm->to(cuda);
  lstm->eval();
  const Tensor x = randn({5, 2, 3}, TensorOptions().device(cuda)).requires_grad_();
  const Tensor y = std::get<0>(lstm(x));
  EXPECT_EQ(recurrence_node(y), "CudnnRnnBackward0");
  const Tensor g = autograd::grad({y.sum()}, {x}, {}, std::nullopt, true)[0];
  try {
    g.sum().backward();
    FAIL() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("double backward of CudnnRnnBackward0 is not supported"), std::string::npos)
        << e.what();
  }
  lstm->train();
  EXPECT_NE(recurrence_node(std::get<0>(lstm(x))), "CudnnRnnBackward0");
  lstm->eval();
  {
    amp::AutocastGuard autocast(kCUDA);
    EXPECT_NE(recurrence_node(std::get<0>(lstm(x))), "CudnnRnnBackward0");
  }
}

}  // namespace
}  // namespace locus
