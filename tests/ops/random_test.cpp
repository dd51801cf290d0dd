// randperm, bernoulli, multinomial, normal_, uniform_ and normal: distributions (tolerances from
// the sample size), reproducibility per seed, the same values on cpu and sim, and errors.

#include <algorithm>
#include <cmath>
#include <set>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

class Random : public testing::OnEachDevice {};

// Pearson's chi-square of observed counts against expected ones.
double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x = 0;
  for (size_t i = 0; i < observed.size(); ++i) x += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  return x;
}

// An upper bound the chi-square of `dof` degrees of freedom exceeds with probability ~1e-6
// (Wilson-Hilferty with z = 4.75), so a correct sampler fails about once in a million runs.
double chi_square_bound(double dof) {
  const double z = 4.75, c = 2.0 / (9.0 * dof);
  return dof * std::pow(1 - c + z * std::sqrt(c), 3);
}

TEST_P(Random, NormalMeanAndVariance) {
  manual_seed(21);
  const int64_t n = 200000;
  Tensor x = empty({n}, TensorOptions().dtype(kFloat64).device(dev()));
  x.normal_(3.0, 2.0);
  const auto v = values(x);
  double mean = 0, var = 0;
  for (double e : v) mean += e;
  mean /= n;
  for (double e : v) var += (e - mean) * (e - mean);
  var /= n - 1;
  // Standard errors: std / sqrt(n) for the mean, std^2 sqrt(2 / (n - 1)) for the variance; 6 of each.
  EXPECT_NEAR(mean, 3.0, 6 * 2.0 / std::sqrt(n));
  EXPECT_NEAR(var, 4.0, 6 * 4.0 * std::sqrt(2.0 / (n - 1)));
  const Tensor y = normal(-1.0, 0.5, {n}, TensorOptions().dtype(kFloat32).device(dev()));
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_NEAR(y.mean().item<float>(), -1.0, 6 * 0.5 / std::sqrt(n));
}

TEST_P(Random, UniformStaysInBounds) {
  manual_seed(22);
  const int64_t n = 100000;
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor x = empty({n}, TensorOptions().dtype(dt).device(dev()));
    x.uniform_(-2.0, 5.0);
    const auto v = values(x);
    EXPECT_GE(*std::min_element(v.begin(), v.end()), -2.0);
    EXPECT_LE(*std::max_element(v.begin(), v.end()), 5.0);
    if (dt == kFloat64) {
      double mean = 0;
      for (double e : v) mean += e;
      EXPECT_NEAR(mean / n, 1.5, 6 * 7.0 / std::sqrt(12.0 * n));
    }
  }
  // A strided destination is filled in logical order.
  Tensor base = zeros({4, 6}, TensorOptions().device(dev()));
  Tensor view = base.t();
  view.uniform_(1.0, 2.0);
  for (double e : values(base)) EXPECT_TRUE(e >= 1.0 && e <= 2.0);
  // Empty tensors draw nothing and take no counters.
  const RngState before = get_rng_state();
  Tensor empty_one = empty({4, 0}, TensorOptions().device(dev()));
  empty_one.uniform_(0.0, 1.0).normal_(0.0, 1.0);
  EXPECT_EQ(randn({4, 0}, TensorOptions().device(dev())).numel(), 0);
  EXPECT_EQ(get_rng_state().offset, before.offset);
}

TEST_P(Random, RandpermPositionsAreUniform) {
  manual_seed(23);
  const int64_t n = 5, trials = 20000;
  std::vector<double> counts(n * n, 0.0);  // value v at position p
  for (int64_t t = 0; t < trials; ++t) {
    const Tensor p = randperm(n, TensorOptions().device(dev()));
    EXPECT_EQ(p.dtype(), kInt64);
    const auto v = values(p);
    for (int64_t i = 0; i < n; ++i) counts[static_cast<size_t>(i * n + static_cast<int64_t>(v[i]))] += 1;
    if (t == 0) {
      std::set<double> s(v.begin(), v.end());
      EXPECT_EQ(s.size(), static_cast<size_t>(n));
    }
  }
  const std::vector<double> expected(counts.size(), static_cast<double>(trials) / n);
  EXPECT_LT(chi_square(counts, expected), chi_square_bound((n - 1) * (n - 1)));
  const auto big = values(randperm(1000, TensorOptions().device(dev()).dtype(kInt32)));
  std::vector<double> sorted = big;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_EQ(randperm(0, TensorOptions().device(dev())).numel(), 0);
}

TEST_P(Random, MultinomialFrequencies) {
  manual_seed(24);
  const Tensor probs = tensor({0.1, 0.0, 0.6, 0.3}).to(dev());
  const int64_t n = 40000;
  const auto draws = values(multinomial(probs, n, true));
  std::vector<double> counts(4, 0.0);
  for (double d : draws) counts[static_cast<size_t>(d)] += 1;
  EXPECT_EQ(counts[1], 0.0);  // zero weight is never drawn
  const std::vector<double> obs{counts[0], counts[2], counts[3]}, exp{0.1 * n, 0.6 * n, 0.3 * n};
  EXPECT_LT(chi_square(obs, exp), chi_square_bound(2));
  // 2-D: one row per distribution, unnormalised weights.
  const Tensor rows = tensor({1.0, 3.0, 0.0, 0.0, 0.0, 5.0}).reshape({2, 3}).to(dev());
  const Tensor s = multinomial(rows, 1000, true);
  EXPECT_EQ(s.shape(), (Shape{2, 1000}));
  const auto v = values(s);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_LT(v[i], 2);
    EXPECT_EQ(v[1000 + i], 2);
  }
}

TEST_P(Random, MultinomialWithoutReplacement) {
  manual_seed(25);
  const Tensor w = tensor({1.0, 2.0, 3.0, 4.0, 0.0}).to(dev());
  // All nonzero categories drawn before the zero one, each at most once.
  for (int t = 0; t < 50; ++t) {
    const auto v = values(multinomial(w, 5));
    std::set<double> s(v.begin(), v.end());
    EXPECT_EQ(s.size(), 5u);
    EXPECT_EQ(v[4], 4);
  }
  // First draw frequencies follow the weights (the first pick is a plain weighted draw).
  const int64_t trials = 20000;
  const Tensor many = tensor({1.0, 2.0, 3.0, 4.0}).reshape({1, 4}).expand({trials, 4}).contiguous().to(dev());
  const auto first = values(multinomial(many, 2).narrow(1, 0, 1));
  std::vector<double> counts(4, 0.0);
  for (double d : first) counts[static_cast<size_t>(d)] += 1;
  EXPECT_LT(chi_square(counts, {0.1 * trials, 0.2 * trials, 0.3 * trials, 0.4 * trials}), chi_square_bound(3));
}

TEST_P(Random, BernoulliRates) {
  manual_seed(26);
  const int64_t n = 100000;
  const Tensor p = full({n}, 0.3, TensorOptions().dtype(kFloat64).device(dev()));
  const Tensor b = bernoulli(p);
  EXPECT_EQ(b.dtype(), kFloat64);
  const double rate = b.sum().item<double>() / n;
  EXPECT_NEAR(rate, 0.3, 6 * std::sqrt(0.3 * 0.7 / n));
  Tensor ints = zeros({n}, TensorOptions().dtype(kInt64).device(dev()));
  ints.bernoulli_(0.8);
  EXPECT_NEAR(ints.sum().item<int64_t>() / static_cast<double>(n), 0.8, 6 * std::sqrt(0.8 * 0.2 / n));
  // p of 0 and 1 are exact; bernoulli_(tensor) broadcasts p.
  Tensor two = empty({3, 2}, TensorOptions().device(dev()));
  two.bernoulli_(tensor({0.0f, 1.0f}).to(dev()));
  EXPECT_EQ(values(two), (std::vector<double>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(bernoulli(ones({4}).to(dev()), 0.0).sum().item<float>(), 0.f);
}

// Every random op once, from seed 99, on `device`.
std::vector<double> draw_all(Device device) {
  const TensorOptions o = TensorOptions().device(device);
  manual_seed(99);
  Tensor a = empty({64}, o);
  a.normal_(0.0, 1.0);
  Tensor b = empty({64}, o.dtype(kFloat64));
  b.uniform_(-1.0, 1.0);
  Tensor c = zeros({40}, o.dtype(kInt32));
  c.bernoulli_(0.25);
  std::vector<double> all;
  for (const Tensor& t : {a, b, c, randperm(50, o), multinomial(tensor({0.2, 0.5, 0.3}).to(device), 20, true),
                          multinomial(tensor({0.2, 0.5, 0.3, 0.1, 0.0}).reshape({1, 5}).to(device), 4),
                          bernoulli(full({30}, 0.5).to(device)), normal(1.0, 2.0, {16}, o),
                          normal(zeros({8}, o), ones({8}, o))}) {
    const auto v = values(t);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

TEST_P(Random, SameSeedSameValues) {
  const auto first = draw_all(dev());
  EXPECT_EQ(first, draw_all(dev()));
  // The other device of the suite draws the very same numbers (counter-based Philox streams).
  EXPECT_EQ(first, draw_all(dev().is_cpu() ? Device("sim:0") : Device("cpu")));
  // The generator moved on: the next draws differ.
  Tensor next = empty({64}, TensorOptions().device(dev()));
  next.normal_();
  EXPECT_NE(values(next), std::vector<double>(first.begin(), first.begin() + 64));
}

TEST_P(Random, ErrorsAsPyTorch) {
  const TensorOptions o = TensorOptions().device(dev());
  EXPECT_THROW(multinomial(tensor({0.5, -1.0}).to(dev()), 1), ValueError);
  EXPECT_THROW(multinomial(tensor({0.5, INFINITY}).to(dev()), 1), ValueError);
  EXPECT_THROW(multinomial(tensor({0.5, NAN}).to(dev()), 1), ValueError);
  EXPECT_THROW(multinomial(tensor({0.0, 0.0}).to(dev()), 1), ValueError);
  EXPECT_THROW(multinomial(tensor({1.0, 1.0}).to(dev()), 3), ValueError);  // without replacement
  EXPECT_EQ(multinomial(tensor({1.0, 1.0}).to(dev()), 3, true).numel(), 3);
  EXPECT_THROW(multinomial(ones({2, 2, 2}, o), 1), ShapeError);
  EXPECT_THROW(multinomial(ones({2}, o), 0), ValueError);
  EXPECT_THROW(multinomial(ones({2}, o.dtype(kInt64)), 1), DTypeError);
  EXPECT_THROW(randperm(-1, o), ValueError);
  EXPECT_THROW(randperm(300, o.dtype(kInt8)), ValueError);
  EXPECT_THROW(randperm(5, o.dtype(kBool)), DTypeError);
  EXPECT_THROW(bernoulli(tensor({0.5, 1.5}).to(dev())), ValueError);
  EXPECT_THROW(bernoulli(ones({2}, o.dtype(kInt64))), DTypeError);
  Tensor x = ones({3}, o);
  EXPECT_THROW(x.bernoulli_(1.5), ValueError);
  EXPECT_THROW(x.normal_(0.0, -1.0), ValueError);
  EXPECT_THROW(x.uniform_(2.0, 1.0), ValueError);
  Tensor i = ones({3}, o.dtype(kInt64));
  EXPECT_THROW(i.normal_(), DTypeError);
  EXPECT_THROW(i.uniform_(), DTypeError);
  EXPECT_THROW(normal(0.0, -1.0, {3}, o), ValueError);
}

INSTANTIATE_TEST_SUITE_P(Devices, Random, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
