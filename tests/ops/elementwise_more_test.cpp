// The elementwise ops added with the activations, on every device, against float64 references
// computed here with <cmath> on fresh random inputs; their in-place forms against the
// out-of-place ones; and their gradients against central differences in float64.

#include <cmath>
#include <functional>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

class ElementwiseMore : public testing::OnEachDevice {};

std::vector<double> map(const std::vector<double>& v, const std::function<double(double)>& f) {
  std::vector<double> r;
  for (double x : v) r.push_back(f(x));
  return r;
}

double sigmoid_of(double x) { return 1 / (1 + std::exp(-x)); }

TEST_P(ElementwiseMore, UnaryOpsAgainstFloat64) {
  testing::MemoryBaseline baseline(dev());
  manual_seed(3);
  const Tensor x = mul(randn({3, 7}), 2.5).to(dev());
  const Tensor unit = sub(mul(rand({3, 7}), 1.8), 0.9).to(dev());
  const auto v = values(x), u = values(unit);
  expect_close(tan(unit), map(u, [](double a) { return std::tan(a); }));
  expect_close(sinh(x), map(v, [](double a) { return std::sinh(a); }));
  expect_close(cosh(x), map(v, [](double a) { return std::cosh(a); }));
  expect_close(asin(unit), map(u, [](double a) { return std::asin(a); }));
  expect_close(acos(unit), map(u, [](double a) { return std::acos(a); }));
  expect_close(atan(x), map(v, [](double a) { return std::atan(a); }));
  expect_close(log2(x.abs()), map(v, [](double a) { return std::log2(std::abs(a)); }));
  expect_close(log10(x.abs()), map(v, [](double a) { return std::log10(std::abs(a)); }));
  expect_close(exp2(x), map(v, [](double a) { return std::exp2(a); }));
  expect_close(reciprocal(x), map(v, [](double a) { return 1 / a; }), 1e-5, 1e-4);
  expect_close(square(x), map(v, [](double a) { return a * a; }));
  expect_close(frac(x), map(v, [](double a) { return a - std::trunc(a); }));
  expect_close(silu(x), map(v, [](double a) { return a * sigmoid_of(a); }));
  expect_close(mish(x), map(v, [](double a) { return a * std::tanh(std::log1p(std::exp(a))); }));
  expect_close(hardsigmoid(x), map(v, [](double a) { return std::min(std::max(a + 3, 0.0), 6.0) / 6; }));
  expect_close(hardswish(x), map(v, [](double a) { return a * std::min(std::max(a + 3, 0.0), 6.0) / 6; }));
  expect_close(logsigmoid(x), map(v, [](double a) { return std::log(sigmoid_of(a)); }));
  expect_close(leaky_relu(x, 0.3), map(v, [](double a) { return a > 0 ? a : 0.3 * a; }));
  expect_close(elu(x, 0.7), map(v, [](double a) { return a > 0 ? a : 0.7 * std::expm1(a); }));
  expect_close(softplus(x, 2, 3), map(v, [](double a) { return 2 * a > 3 ? a : std::log1p(std::exp(2 * a)) / 2; }));
  expect_close(hardtanh(x, -1.5, 0.5), map(v, [](double a) { return std::min(std::max(a, -1.5), 0.5); }));
  expect_close(relu6(x), map(v, [](double a) { return std::min(std::max(a, 0.0), 6.0); }));
  expect_close(gelu(x, "tanh"), map(v, [](double a) {
                 return 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)));
               }));
  expect_close(clamp_min(x, 0.5), map(v, [](double a) { return std::max(a, 0.5); }));
  expect_close(clamp_max(x, 0.5), map(v, [](double a) { return std::min(a, 0.5); }));
  EXPECT_EQ(tan(x).device(), dev());
}

TEST_P(ElementwiseMore, BinaryAndTernaryOpsBroadcast) {
  manual_seed(4);
  const Tensor a = randn({4, 1}).to(dev()), b = randn({3}).to(dev()), c = add(rand({4, 3}), 0.5).to(dev());
  const auto va = values(a), vb = values(b), vc = values(c);
  std::vector<double> at2, hyp, cmul, cdiv, lerp_ref;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) {
      at2.push_back(std::atan2(va[i], vb[j]));
      hyp.push_back(std::hypot(va[i], vb[j]));
      cmul.push_back(va[i] + 0.5 * vb[j] * vc[i * 3 + j]);
      cdiv.push_back(va[i] + 0.5 * vb[j] / vc[i * 3 + j]);
      lerp_ref.push_back(va[i] + (vc[i * 3 + j] - 0.5) * (vb[j] - va[i]));
    }
  expect_close(atan2(a, b), at2);
  expect_close(hypot(a, b), hyp);
  expect_close(addcmul(a, b, c, 0.5), cmul);
  expect_close(addcdiv(a, b, c, 0.5), cdiv, 1e-5, 1e-5);
  expect_close(lerp(a, b, sub(c, 0.5)), lerp_ref);
  EXPECT_EQ(atan2(a, b).shape(), (Shape{4, 3}));
}

TEST_P(ElementwiseMore, PredicatesAndNanToNum) {
  const double nan = std::nan(""), inf = INFINITY;
  const Tensor x = tensor({1.0, nan, inf, -inf, -0.0}).to(dev());
  EXPECT_EQ(x.isnan().tolist<bool>().values, (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(x.isinf().tolist<bool>().values, (std::vector<bool>{false, false, true, true, false}));
  EXPECT_EQ(x.isfinite().tolist<bool>().values, (std::vector<bool>{true, false, false, false, true}));
  expect_close(x.nan_to_num(), {1.0, 0.0, 3.4028234663852886e38, -3.4028234663852886e38, 0.0}, 0, 0);
  expect_close(x.to(kFloat16).nan_to_num(2.0, 7.0), {1.0, 2.0, 7.0, -65504.0, 0.0}, 0, 0);
  EXPECT_EQ(isnan(tensor({1, 2}).to(dev())).dtype(), kBool);
  EXPECT_EQ(square(tensor({true, false}).to(dev())).dtype(), kInt64);
  EXPECT_EQ(tan(tensor({1, 2}).to(dev())).dtype(), kFloat32);
}

TEST_P(ElementwiseMore, InPlaceFormsMatchOutOfPlace) {
  manual_seed(5);
  const Tensor x = randn({2, 5}).to(dev()), o = add(rand({2, 5}), 0.5).to(dev());
  auto same = [](const Tensor& a, const Tensor& b) { EXPECT_TRUE(equal(a, b)) << a << " vs " << b; };
  Tensor t = x.clone();
  same(t.tan_(), tan(x));
  t = x.clone();
  same(t.exp2_(), exp2(x));
  t = x.clone();
  same(t.atan2_(o), atan2(x, o));
  t = x.clone();
  same(t.clamp_max_(0.25), clamp_max(x, 0.25));
  t = x.clone();
  same(t.addcdiv_(o, o, 2), addcdiv(x, o, o, 2));
  t = x.clone();
  same(t.lerp_(o, 0.75), lerp(x, o, 0.75));
  t = x.clone();
  same(leaky_relu_(t, 0.5), leaky_relu(x, 0.5));
  Tensor ints = tensor({1, 2}).to(dev());
  EXPECT_THROW(ints.tan_(), DTypeError);
  EXPECT_THROW(ints.addcmul_(tensor({0.5}).to(dev()), tensor({2.0}).to(dev())), DTypeError);
  EXPECT_THROW(x.clone().addcmul_(tensor({{1.0}, {2.0}, {3.0}}).to(dev()), o), ShapeError);
}

// d/dx of f at x by central differences, for each element of a float64 tensor.
std::vector<double> numeric_grad(const std::function<Tensor(const Tensor&)>& f, const Tensor& x) {
  std::vector<double> v = values(x), g;
  const double h = 1e-6;
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<double> up = v, down = v;
    up[i] += h, down[i] -= h;
    const double fu = f(tensor(up, TensorOptions().dtype(kFloat64)).to(x.device())).sum().item<double>();
    const double fd = f(tensor(down, TensorOptions().dtype(kFloat64)).to(x.device())).sum().item<double>();
    g.push_back((fu - fd) / (2 * h));
  }
  return g;
}

TEST_P(ElementwiseMore, GradientsMatchCentralDifferences) {
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> fns = {
      {"tan", [](const Tensor& t) { return tan(t); }},
      {"asin", [](const Tensor& t) { return asin(mul(t, 0.3)); }},
      {"log10", [](const Tensor& t) { return log10(add(t.abs(), 0.5)); }},
      {"exp2", [](const Tensor& t) { return exp2(t); }},
      {"silu", [](const Tensor& t) { return silu(t); }},
      {"mish", [](const Tensor& t) { return mish(t); }},
      {"logsigmoid", [](const Tensor& t) { return logsigmoid(t); }},
      {"elu", [](const Tensor& t) { return elu(t, 0.4); }},
      {"selu", [](const Tensor& t) { return selu(t); }},
      {"softplus", [](const Tensor& t) { return softplus(t, 1.5, 2); }},
      {"hardswish", [](const Tensor& t) { return hardswish(t); }},
      {"gelu_tanh", [](const Tensor& t) { return gelu(t, "tanh"); }},
      {"atan2", [](const Tensor& t) { return atan2(t, add(t, 2.0)); }},
      {"hypot", [](const Tensor& t) { return hypot(t, mul(t, -0.5)); }},
      {"addcdiv", [](const Tensor& t) { return addcdiv(t, t, add(t.abs(), 1.0), -2); }},
  };
  const Tensor x = tensor({-2.1, -0.7, 0.35, 1.2, 2.6}, TensorOptions().dtype(kFloat64)).to(dev());
  for (const auto& [name, f] : fns) {
    SCOPED_TRACE(name);
    const Tensor leaf = x.clone().requires_grad_();
    f(leaf).sum().backward();
    expect_close(leaf.grad(), numeric_grad(f, x), 1e-6, 1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ElementwiseMore, ::testing::ValuesIn(testing::value_devices()),
                         testing::device_test_name);

}  // namespace
}  // namespace locus
