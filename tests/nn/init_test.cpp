// nn::init against an independent reference: the moments and bounds of each distribution over a
// large tensor (tolerances from the sample size), PyTorch's fans and gains, orthogonality,
// reproducibility per seed on every device, and PyTorch's errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

namespace init = nn::init;
using testing::values;

// Sample mean and standard deviation.
std::pair<double, double> moments(const std::vector<double>& v) {
  const double n = static_cast<double>(v.size());
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double sq = 0;
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / (n - 1))};
}

// Checks a sample against a distribution of mean `mean` and standard deviation `std`: the
// sample mean within 6 standard errors (std / sqrt(n)), the sample std within 6 of its own
// standard errors, sqrt((kurtosis - 1) / (4 n)) relative (kurtosis 3 normal, 1.8 uniform). A
// correct init fails this about once in 10^8 runs.
void expect_moments(const std::vector<double>& v, double mean, double std, double kurtosis) {
  const double n = static_cast<double>(v.size());
  const auto [m, s] = moments(v);
  EXPECT_NEAR(m, mean, 6 * std / std::sqrt(n));
  EXPECT_NEAR(s, std, 6 * std * std::sqrt((kurtosis - 1) / (4 * n)));
}

class InitTest : public ::testing::TestWithParam<std::string> {
 protected:
  Device dev() const { return Device(GetParam()); }
  Tensor big(Shape shape = {256, 1024}) const { return empty(shape, TensorOptions().device(dev())); }
};

TEST_P(InitTest, UniformAndNormalHaveTheirMomentsAndBounds) {
  manual_seed(1);
  const std::vector<double> u = values(init::uniform_(big(), -0.5, 1.5));
  expect_moments(u, 0.5, 2.0 / std::sqrt(12.0), 1.8);
  EXPECT_GE(*std::min_element(u.begin(), u.end()), -0.5);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.5);
  expect_moments(values(init::normal_(big(), 2.0, 0.25)), 2.0, 0.25, 3.0);
}

TEST_P(InitTest, TruncNormalStaysInItsBoundsWithTheTruncatedMoments) {
  manual_seed(2);
  // Normal(0.5, 1) cut to [-1, 1]: the truncated normal's mean and std, computed here from
  // alpha = (a - mu) / sigma, beta = (b - mu) / sigma (Johnson, Kotz and Balakrishnan).
  const double mu = 0.5, sigma = 1.0, a = -1.0, b = 1.0;
  const std::vector<double> v = values(init::trunc_normal_(big(), mu, sigma, a, b));
  EXPECT_GE(*std::min_element(v.begin(), v.end()), a);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), b);
  auto pdf = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); };
  auto cdf = [](double x) { return (1 + std::erf(x / std::sqrt(2.0))) / 2; };
  const double al = (a - mu) / sigma, be = (b - mu) / sigma, z = cdf(be) - cdf(al);
  const double mean = mu + sigma * (pdf(al) - pdf(be)) / z;
  const double var = sigma * sigma * (1 + (al * pdf(al) - be * pdf(be)) / z - std::pow((pdf(al) - pdf(be)) / z, 2));
  expect_moments(v, mean, std::sqrt(var), 3.0);  // a truncated normal's kurtosis is at most a normal's
}

TEST_P(InitTest, XavierAndKaimingScaleByThePyTorchFans) {
  manual_seed(3);
  // A [64, 32, 3, 3] weight: fan_in 288, fan_out 576 (PyTorch's _calculate_fan_in_and_fan_out).
  const Shape conv{64, 32, 3, 3};
  const double fan_in = 288, fan_out = 576;
  const double xavier = std::sqrt(2.0 / (fan_in + fan_out));
  std::vector<double> v = values(init::xavier_uniform_(big(conv), 2.0));
  expect_moments(v, 0, 2.0 * xavier, 1.8);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 2.0 * xavier * std::sqrt(3.0));
  expect_moments(values(init::xavier_normal_(big(conv))), 0, xavier, 3.0);
  v = values(init::kaiming_uniform_(big(conv), 0, init::kFanIn, init::kReLU));
  expect_moments(v, 0, std::sqrt(2.0 / fan_in), 1.8);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), std::sqrt(6.0 / fan_in));
  expect_moments(values(init::kaiming_normal_(big(conv), 0, init::kFanOut, init::kReLU)), 0, std::sqrt(2.0 / fan_out), 3.0);
  // The defaults: leaky_relu with a = 0 is relu's gain; a = sqrt(5) is Linear's 1/sqrt(fan_in) bound.
  v = values(init::kaiming_uniform_(big({512, 128}), std::sqrt(5.0)));
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 1.0 / std::sqrt(128.0));
  expect_moments(v, 0, 1.0 / std::sqrt(128.0) / std::sqrt(3.0), 1.8);
}

TEST_P(InitTest, OrthogonalGivesOrthonormalRowsOrColumns) {
  manual_seed(4);
  for (const Shape& shape : {Shape{6, 6}, Shape{5, 12}, Shape{12, 5}, Shape{4, 3, 2}}) {
    Tensor w = init::orthogonal_(empty(shape, TensorOptions().dtype(kFloat64).device(dev())), 1.5);
    const int64_t rows = shape[0], cols = w.numel() / rows;
    const Tensor m = w.reshape({rows, cols}).cpu();
    // The short side is orthonormal: W W^T = gain^2 I for a wide matrix, W^T W for a tall one.
    const Tensor gram = rows <= cols ? mm(m, m.t()) : mm(m.t(), m);
    const int64_t k = std::min(rows, cols);
    const std::vector<double> g = values(gram / 2.25), id = values(eye(k, std::nullopt, TensorOptions().dtype(kFloat64)));
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], id[i], 1e-12) << shape << " element " << i;
  }
  Tensor w32 = init::orthogonal_(empty({16, 16}, TensorOptions().device(dev())));
  const std::vector<double> g = values(mm(w32.cpu(), w32.cpu().t()));
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 16; ++j) EXPECT_NEAR(g[i * 16 + j], i == j ? 1.0 : 0.0, 1e-5);
}

TEST_P(InitTest, FixedPatterns) {
  Tensor w = big({3, 4});
  EXPECT_EQ(values(init::constant_(w, 0.25)), std::vector<double>(12, 0.25));
  EXPECT_EQ(values(init::zeros_(w)), std::vector<double>(12, 0.0));
  EXPECT_EQ(values(init::ones_(w)), std::vector<double>(12, 1.0));
  const std::vector<double> e = values(init::eye_(w));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(e[i * 4 + j], i == j ? 1.0 : 0.0);
}

TEST_P(InitTest, ReproduciblePerSeedAndOutsideAutograd) {
  auto draw = [&](uint64_t seed) {
    manual_seed(seed);
    Tensor w = empty({8, 5}, TensorOptions().device(dev())).requires_grad_(true);
    init::kaiming_normal_(w);
    init::trunc_normal_(w, 0, 0.02);
    EXPECT_TRUE(w.requires_grad());
    EXPECT_FALSE(w.grad().defined());
    return values(w);
  };
  EXPECT_EQ(draw(7), draw(7));
  EXPECT_NE(draw(7), draw(8));
  // The same seed gives the same weights on cpu and the simulated device.
  manual_seed(9);
  const std::vector<double> here = values(init::xavier_uniform_(big({4, 6})));
  manual_seed(9);
  EXPECT_EQ(here, values(init::xavier_uniform_(empty({4, 6}))));
}

INSTANTIATE_TEST_SUITE_P(Devices, InitTest, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

TEST(Init, ErrorsAsPyTorch) {
  EXPECT_THROW(init::kaiming_uniform_(empty({3})), ValueError);  // "Fan in and fan out can not be computed ..."
  EXPECT_THROW(init::xavier_normal_(empty({3})), ValueError);
  EXPECT_THROW(init::orthogonal_(empty({3})), ValueError);
  EXPECT_THROW(init::eye_(empty({2, 2, 2})), ValueError);
  EXPECT_THROW(init::calculate_gain("softmax"), ValueError);
  EXPECT_THROW(init::normal_(empty({2}), 0, -1), ValueError);
  EXPECT_THROW(init::uniform_(empty({2}, TensorOptions().dtype(kInt64))), DTypeError);
  // Zero-element tensors are left alone (PyTorch warns that it is a no-op).
  EXPECT_NO_THROW(init::kaiming_uniform_(empty({0, 3})));
  EXPECT_NO_THROW(init::orthogonal_(empty({0, 3})));
}

TEST(Init, GainsAndFansAsPyTorch) {
  // torch.nn.init.calculate_gain and _calculate_fan_in_and_fan_out, PyTorch 1.13.
  EXPECT_DOUBLE_EQ(init::calculate_gain(init::kTanh), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(init::kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain(init::kLeakyReLU), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(init::calculate_gain(init::kSELU), 0.75);
  EXPECT_DOUBLE_EQ(init::calculate_gain(init::kConv2D), 1.0);
  EXPECT_EQ(init::_calculate_fan_in_and_fan_out(empty({5, 3})), std::make_pair(int64_t{3}, int64_t{5}));
  EXPECT_EQ(init::_calculate_fan_in_and_fan_out(empty({6, 2, 3, 5})), std::make_pair(int64_t{30}, int64_t{90}));
}

TEST(Init, LinearKeepsPyTorchsDefault) {
  // PyTorch's reset_parameters: kaiming_uniform_(a = sqrt(5)) for the weight, uniform in
  // +-1/sqrt(in_features) for the bias: both bounded by 1/sqrt(in) with a uniform's std.
  manual_seed(5);
  nn::Linear fc(400, 300);
  const double bound = 1.0 / std::sqrt(400.0);
  const std::vector<double> w = values(fc->weight), b = values(fc->bias);
  EXPECT_LE(*std::max_element(w.begin(), w.end()), bound);
  EXPECT_GE(*std::min_element(w.begin(), w.end()), -bound);
  expect_moments(w, 0, bound / std::sqrt(3.0), 1.8);
  EXPECT_LE(*std::max_element(b.begin(), b.end()), bound);
  EXPECT_GE(*std::min_element(b.begin(), b.end()), -bound);
}

}  // namespace
}  // namespace locus
