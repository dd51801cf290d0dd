// Second derivatives of every kind of op against numbers: for each op f, the create_graph
// gradient g(x) = d<f(x), w>/dx is differentiated again, d<g(x), v>/dx, and compared with
// central finite differences of <g(x), v> in float64. An op whose double backward is not
// supported would throw; one that silently dropped a term would differ.

#include <functional>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

struct Case {
  const char* name;
  Shape shape;
  std::function<Tensor(const Tensor&)> f;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

Tensor wave(const Shape& shape, double a, double b) {
  return sin(arange(shape.numel(), TensorOptions().dtype(kFloat64)) * a + b).reshape(shape);
}

class DoubleBackward : public ::testing::TestWithParam<Case> {};

TEST_P(DoubleBackward, MatchesFiniteDifferencesOfTheFirstDerivative) {
  const Case& c = GetParam();
  const Tensor x0 = wave(c.shape, 0.73, 0.4) * 0.9;
  // <g(x), v>, with g recorded when `graph`.
  auto first = [&](const Tensor& x, bool graph) {
    const Tensor y = c.f(x);
    const Tensor w = wave(y.shape(), 0.37, 1.1);
    return autograd::grad({(y * w).sum()}, {x}, {}, std::nullopt, graph, /*allow_unused=*/true)[0];
  };
  const Tensor v = wave(c.shape, 0.51, 0.2);
  const Tensor x = x0.clone().requires_grad_();
  const Tensor g = first(x, true);
  ASSERT_TRUE(g.defined());
  std::vector<double> analytic(static_cast<size_t>(x0.numel()), 0.0);
  if (g.requires_grad()) {
    const Tensor second = autograd::grad({(g * v).sum()}, {x}, {}, std::nullopt, false, true)[0];
    if (second.defined()) analytic = values(second);
  }
  const double h = 1e-5;
  const std::vector<double> base = values(x0);
  for (int64_t j = 0; j < x0.numel(); ++j) {
    auto at = [&](double delta) {
      std::vector<double> moved = base;
      moved[static_cast<size_t>(j)] += delta;
      const Tensor xj = tensor(moved, c.shape, kFloat64).requires_grad_();
      return (first(xj, false) * v).sum().item<double>();
    };
    const double numeric = (at(h) - at(-h)) / (2 * h);
    EXPECT_NEAR(analytic[static_cast<size_t>(j)], numeric, 1e-5 * std::max(1.0, std::abs(numeric)))
        << c.name << " element " << j;
  }
}

const Tensor kW = wave({3, 4}, 0.41, 0.3), kB = wave({3}, 0.8, 0.1);
const Tensor kConvW = wave({2, 2, 3, 3}, 0.29, 0.4), kConvB = wave({2}, 0.6, 0.2);

INSTANTIATE_TEST_SUITE_P(
    Ops, DoubleBackward,
    ::testing::Values(
        Case{"tanh_pow", {2, 3}, [](const Tensor& x) { return tanh(x).pow(3); }},
        Case{"sigmoid_exp_log", {2, 3}, [](const Tensor& x) { return sigmoid(x) * exp(x) + log(x * x + 1); }},
        Case{"gelu_silu_mish", {2, 3}, [](const Tensor& x) { return gelu(x) + silu(x) * mish(x); }},
        Case{"gelu_tanh_softplus_elu", {2, 3}, [](const Tensor& x) { return gelu(x, "tanh") * softplus(x) + elu(x).pow(2); }},
        Case{"div_atan2_sqrt", {2, 3}, [](const Tensor& x) { return atan2(x, x * x + 1) / (sqrt(x * x + 2)); }},
        Case{"sum_mean_prod", {2, 3}, [](const Tensor& x) { return x.pow(2).sum(1) * x.mean(0).sum() + (x + 2).prod(1); }},
        Case{"var_std_norm_logsumexp", {2, 3}, [](const Tensor& x) { return x.var({1}) * x.std({0}).sum() + norm(x, 2) + logsumexp(x, 1); }},
        Case{"amax_max_sort", {2, 3}, [](const Tensor& x) { return x.amax({1}) * x.max() + sort(x, 1).values.pow(2).sum(1); }},
        Case{"cumsum_cumprod", {2, 3}, [](const Tensor& x) { return x.cumsum(1) * (x + 2).cumprod(1); }},
        Case{"softmax_log_softmax", {2, 3}, [](const Tensor& x) { return softmax(x, 1) * log_softmax(x * 2, 0); }},
        Case{"matmul_linear", {2, 4}, [](const Tensor& x) { return linear(tanh(x), kW, kB).pow(2) + matmul(x, x.t()).sum(); }},
        Case{"views_cat_gather", {2, 3}, [](const Tensor& x) {
               return cat({x.t().reshape({-1}), x.narrow(1, 1, 2).reshape({-1}) * x.select(0, 0).sum()}, 0).pow(2) +
                      gather(x, 1, tensor({1, 0, 2, 2, 1, 0}, kInt64).view({2, 3})).sum();
             }},
        Case{"layer_norm_rms_norm", {2, 4}, [](const Tensor& x) {
               return layer_norm(x, {4}, kW.select(0, 0) + 1, kB.narrow(0, 0, 1).expand({4})) * nn::functional::rms_norm(x, nn::functional::RMSNormFuncOptions({4}));
             }},
        Case{"batch_group_norm", {2, 2, 3}, [](const Tensor& x) {
               return batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5).pow(2) +
                      group_norm(x, 2).pow(3);
             }},
        Case{"conv2d_pools", {1, 2, 5, 5}, [](const Tensor& x) {
               const Tensor y = tanh(conv2d(x, kConvW, kConvB, 1, 1));
               return max_pool2d(y, 2) .sum() + avg_pool2d(y * y, 2).sum() + adaptive_avg_pool2d(y.pow(3), {2, 2}).sum();
             }},
        Case{"conv_transpose_conv1d", {1, 2, 4, 4}, [](const Tensor& x) {
               return conv_transpose2d(x, kConvW, kConvB, 2).pow(2).sum() +
                      conv1d(x.flatten(2), kConvW.select(3, 0), kConvB, 2).pow(2).sum();
             }},
        Case{"losses", {3, 4}, [](const Tensor& x) {
               const Tensor t = wave({3, 4}, 0.9, 0.5);
               return cross_entropy_loss(x, tensor({1, 3, 0}, kInt64)) + mse_loss(x, t) + smooth_l1_loss(x, t) +
                      huber_loss(x, t, nn::Reduction::Mean, 0.5) + binary_cross_entropy_with_logits(x, sigmoid(t)) +
                      kl_div(log_softmax(x, 1), softmax(t, 1), nn::Reduction::Sum);
             }},
        Case{"attention", {1, 3, 4}, [](const Tensor& x) {
               return scaled_dot_product_attention(x, x * 0.5, tanh(x), {}, 0.0, true);
             }}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace locus
