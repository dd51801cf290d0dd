// Elementwise ops on every device against float64 references on fresh random inputs.

#include <cmath>
#include <functional>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

class Elementwise : public testing::OnEachDevice {};

TEST_P(Elementwise, BinaryOpsBroadcastAgainstFloat64) {
  testing::MemoryBaseline baseline(dev());
  manual_seed(1);
  const Tensor a = randn({4, 1, 5}).to(dev());
  const Tensor b = randn({3, 1}).to(dev());
  const auto va = values(a), vb = values(b);
  auto ref = [&](std::function<double(double, double)> f) {
    std::vector<double> r;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 5; ++k) r.push_back(f(va[i * 5 + k], vb[j]));
    return r;
  };
  expect_close(a + b, ref([](double x, double y) { return x + y; }));
  expect_close(a - b, ref([](double x, double y) { return x - y; }));
  expect_close(a * b, ref([](double x, double y) { return x * y; }));
  expect_close(a / b, ref([](double x, double y) { return x / y; }), 1e-5, 1e-4);
  expect_close(add(a, b, 2.5), ref([](double x, double y) { return x + 2.5 * y; }));
  expect_close(maximum(a, b), ref([](double x, double y) { return std::max(x, y); }));
  expect_close(minimum(a, b), ref([](double x, double y) { return std::min(x, y); }));
  expect_close(pow(a.abs(), b), ref([](double x, double y) { return std::pow(std::abs(x), y); }), 1e-4, 1e-4);
  expect_close((a < b).to(kFloat64), ref([](double x, double y) { return x < y ? 1.0 : 0.0; }), 0, 0);
  EXPECT_EQ((a + b).shape(), (Shape{4, 3, 5}));
  EXPECT_EQ((a + b).device(), dev());
}

TEST_P(Elementwise, UnaryOpsAgainstFloat64) {
  testing::MemoryBaseline baseline(dev());
  manual_seed(2);
  const Tensor x = randn({37}, TensorOptions().dtype(kFloat64)).to(dev());
  const auto v = values(x);
  auto ref = [&](std::function<double(double)> f) {
    std::vector<double> r;
    for (double e : v) r.push_back(f(e));
    return r;
  };
  expect_close(neg(x), ref([](double e) { return -e; }));
  expect_close(abs(x), ref([](double e) { return std::abs(e); }));
  expect_close(exp(x), ref([](double e) { return std::exp(e); }));
  expect_close(log(abs(x)), ref([](double e) { return std::log(std::abs(e)); }));
  expect_close(sqrt(abs(x)), ref([](double e) { return std::sqrt(std::abs(e)); }));
  expect_close(tanh(x), ref([](double e) { return std::tanh(e); }));
  expect_close(sigmoid(x), ref([](double e) { return 1 / (1 + std::exp(-e)); }));
  expect_close(relu(x), ref([](double e) { return e > 0 ? e : 0; }));
  expect_close(gelu(x), ref([](double e) { return 0.5 * e * (1 + std::erf(e / std::sqrt(2.0))); }));
  expect_close(clamp(x, -0.5, 0.5), ref([](double e) { return std::clamp(e, -0.5, 0.5); }));
  expect_close(clamp(x, std::nullopt, 0.1), ref([](double e) { return std::min(e, 0.1); }));
}

TEST_P(Elementwise, LargeStridedAndThreadedMatchReference) {
  manual_seed(3);
  const Tensor a = randn({513, 1031}).to(dev());  // past the threading threshold, odd sizes
  const Tensor t = a.t();                          // non-contiguous view
  const Tensor r = t * 2.0 + 1.0;
  const auto va = values(a), vr = values(r);
  for (int64_t i = 0; i < 1031; i += 97)
    for (int64_t j = 0; j < 513; j += 31) EXPECT_NEAR(vr[i * 513 + j], va[j * 1031 + i] * 2 + 1, 1e-5);
}

TEST_P(Elementwise, InPlaceAndScalarForms) {
  Tensor x = tensor({1.f, 2.f, 3.f}).to(dev());
  const Tensor before = x;
  x += 1;
  x.mul_(tensor({2.f, 2.f, 2.f}).to(dev()));
  x -= tensor(1.f);  // a 0-dim CPU tensor joins as a scalar
  x /= 2;
  EXPECT_TRUE(x.is_same(before));
  expect_close(x, {1.5, 2.5, 3.5});
  expect_close(10.0 - x, {8.5, 7.5, 6.5});
  expect_close(3.0 / tensor({1.f, 2.f}).to(dev()), {3.0, 1.5});
  Tensor i = tensor({1, 2, 3}).to(dev());
  EXPECT_THROW(i.add_(0.5), DTypeError);  // float result into an int tensor
  expect_close(i, {1, 2, 3});            // left intact
}

TEST_P(Elementwise, TypePromotionFollowsPyTorch) {
  const Tensor i = tensor({1, 2}).to(dev());
  const Tensor f = tensor({1.f, 2.f}).to(dev());
  const Tensor h = tensor({1.f, 2.f}, TensorOptions().dtype(kFloat16)).to(dev());
  EXPECT_EQ((i + f).dtype(), kFloat32);
  EXPECT_EQ((i + 2).dtype(), kInt64);
  EXPECT_EQ((i + 2.5).dtype(), kFloat32);
  EXPECT_EQ((i / i).dtype(), kFloat32);
  EXPECT_EQ((h * 2.0).dtype(), kFloat16);
  EXPECT_EQ((h + f).dtype(), kFloat32);
  EXPECT_EQ((h + tensor(2.0, TensorOptions().dtype(kFloat64))).dtype(), kFloat16);  // 0-dim ranks lower
  EXPECT_EQ((i < f).dtype(), kBool);
  EXPECT_EQ(promote_types(kUInt8, kInt8), kInt32);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(exp(i).dtype(), kFloat32);
  EXPECT_THROW(tensor({true}) - tensor({false}), DTypeError);
}

TEST_P(Elementwise, EveryDtypeRoundTrips) {
  for (DType d : {kBool, kUInt8, kInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
    const Tensor x = tensor({0.0, 1.0, 2.0, 3.0}).to(d).to(dev());
    EXPECT_EQ(x.dtype(), d);
    const Tensor y = (x + x).to(kFloat64).cpu();
    if (d == kBool) expect_close(y, {0, 1, 1, 1});
    else expect_close(y, {0, 2, 4, 6});
  }
  expect_close(tensor({1.0f / 3}).to(kFloat16), {0.333251953125}, 0, 0);
  expect_close(tensor({1.0f / 3}).to(kBFloat16), {0.333984375}, 0, 0);
  EXPECT_EQ(Half::from_float_soft(65520.f), Half(65520.f).bits);
  for (float f : {0.f, 1e-8f, -2.5f, 6.1e-5f, 1e5f, 3.14159f}) EXPECT_EQ(Half::from_float_soft(f), Half(f).bits) << f;
}

TEST_P(Elementwise, WhereAndComparisons) {
  const Tensor a = tensor({1.f, 5.f, 3.f}).to(dev());
  const Tensor b = tensor({4.f, 2.f, 3.f}).to(dev());
  expect_close(where(a > b, a, b), {4, 5, 3});
  expect_close((a == b).to(kInt64), {0, 0, 1});
  expect_close((a != 3).to(kInt64), {1, 1, 0});
  EXPECT_THROW(where(a, a, b), DTypeError);
}

INSTANTIATE_TEST_SUITE_P(Devices, Elementwise, ::testing::ValuesIn(testing::value_devices()),
                         testing::device_test_name);

}  // namespace
}  // namespace locus
