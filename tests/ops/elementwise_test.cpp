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

// The ops the op table added, in float64 and float32, against the C library in float64.
TEST_P(Elementwise, NewUnaryAndBinaryOpsAgainstFloat64) {
  testing::MemoryBaseline baseline(dev());
  manual_seed(12);
  for (DType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-6;
    const Tensor x = (randn({41}, TensorOptions().dtype(dtype)) * 3.0).to(dev());
    const Tensor y = (randn({41}, TensorOptions().dtype(dtype)) * 2.0).to(dev());
    const auto vx = values(x), vy = values(y);
    auto ref = [&](std::function<double(double)> f) {
      std::vector<double> r;
      for (double e : vx) r.push_back(f(e));
      return r;
    };
    auto ref2 = [&](std::function<double(double, double)> f) {
      std::vector<double> r;
      for (size_t i = 0; i < vx.size(); ++i) r.push_back(f(vx[i], vy[i]));
      return r;
    };
    expect_close(sin(x), ref([](double e) { return std::sin(e); }), tol, tol);
    expect_close(cos(x), ref([](double e) { return std::cos(e); }), tol, tol);
    expect_close(log1p(abs(x)), ref([](double e) { return std::log1p(std::abs(e)); }), tol, tol);
    expect_close(expm1(x), ref([](double e) { return std::expm1(e); }), tol, tol);
    expect_close(rsqrt(abs(x)), ref([](double e) { return 1 / std::sqrt(std::abs(e)); }), tol, tol);
    expect_close(erf(x), ref([](double e) { return std::erf(e); }), tol, tol);
    expect_close(floor(x), ref([](double e) { return std::floor(e); }), 0, 0);
    expect_close(ceil(x), ref([](double e) { return std::ceil(e); }), 0, 0);
    expect_close(round(x), ref([](double e) { return std::nearbyint(e); }), 0, 0);
    expect_close(trunc(x), ref([](double e) { return std::trunc(e); }), 0, 0);
    expect_close(sign(x), ref([](double e) { return (e > 0) - (e < 0); }), 0, 0);
    auto py_mod = [](double a, double b) {
      double m = std::fmod(a, b);
      if (m != 0 && ((b < 0) != (m < 0))) m += b;
      return m;
    };
    expect_close(remainder(x, y), ref2(py_mod), tol, tol);
    expect_close(fmod(x, y), ref2([](double a, double b) { return std::fmod(a, b); }), tol, tol);
    expect_close(div(x, y, "trunc"), ref2([](double a, double b) { return std::trunc(a / b); }), tol, tol);
    expect_close(floor_divide(x, y), ref2([](double a, double b) { return std::floor(a / b); }), tol, tol);
    expect_close(logical_and(x > 0, y > 0).to(kFloat64), ref2([](double a, double b) { return a > 0 && b > 0; }), 0, 0);
    expect_close(logical_xor(x, y > 0).to(kFloat64), ref2([](double a, double b) { return (a != 0) != (b > 0); }), 0, 0);
    expect_close(logical_not(x > 0).to(kFloat64), ref([](double e) { return !(e > 0); }), 0, 0);
  }
}

// Python's integer floor division and modulo, and the errors PyTorch raises.
TEST_P(Elementwise, IntegerDivisionFollowsPython) {
  const Tensor a = tensor({-7, 7, -7, 7, 0}).to(dev());
  const Tensor b = tensor({2, 2, -2, -2, 3}).to(dev());
  EXPECT_EQ(floor_divide(a, b).dtype(), kInt64);
  EXPECT_EQ(values(floor_divide(a, b)), (std::vector<double>{-4, 3, 3, -4, 0}));
  EXPECT_EQ(values(div(a, b, "trunc")), (std::vector<double>{-3, 3, 3, -3, 0}));
  EXPECT_EQ(values(remainder(a, b)), (std::vector<double>{1, 1, -1, -1, 0}));
  EXPECT_EQ(values(fmod(a, b)), (std::vector<double>{-1, 1, -1, 1, 0}));
  EXPECT_EQ(values(remainder(a, 3)), (std::vector<double>{2, 1, 2, 1, 0}));
  const Tensor min = tensor(std::vector<long long>{INT64_MIN}).to(dev());
  EXPECT_EQ(floor_divide(min, -1).cpu().to_vector<int64_t>()[0], INT64_MIN);  // wraps, never traps
  EXPECT_EQ(remainder(min, -1).cpu().to_vector<int64_t>()[0], 0);
  if (!dev().is_cuda()) {
    EXPECT_THROW(floor_divide(a, 0), ValueError);
    EXPECT_THROW(remainder(a, tensor({1, 0, 1, 1, 1}).to(dev())), ValueError);
  }
  EXPECT_THROW(div(a, b, "nearest"), ValueError);
  EXPECT_THROW(floor_divide(tensor({true}).to(dev()), tensor({true}).to(dev())), DTypeError);
}

// PyTorch's promotion of a C++ number with integer and bool tensors, and the clamp rules.
TEST_P(Elementwise, NumbersPromoteAsPythonNumbers) {
  const Tensor i = tensor({1, 2, 3}).to(dev());
  const Tensor u = tensor({1, 2, 3}).to(kUInt8).to(dev());
  const Tensor b = tensor({true, false}).to(dev());
  expect_close(2.5 / i, {2.5, 1.25, 2.5 / 3});
  EXPECT_EQ((2.5 / i).dtype(), kFloat32);
  expect_close(-2 / u, {-2.0, -1.0, -2.0 / 3});
  expect_close(3 / b, {3.0, INFINITY});
  expect_close(2.5 - u, {1.5, 0.5, -0.5});
  EXPECT_EQ((u + (-1)).dtype(), kUInt8);
  expect_close(u + (-1), {0, 1, 2});
  expect_close(u * 300, {44, 88, 132});  // wraps in uint8, as PyTorch
  expect_close(clamp(tensor({1.f, 5.f, 9.f}).to(dev()), 6, 2), {2, 2, 2});
  expect_close(clamp(i, 1.5), {1.5, 2, 3});
  EXPECT_EQ(clamp(i, 1.5).dtype(), kFloat32);
  EXPECT_EQ(clamp(b, 0, 1).dtype(), kInt64);
  expect_close(clamp(u, -1), {255, 255, 255});
  EXPECT_THROW(-b, DTypeError);
  EXPECT_THROW(relu(b), DTypeError);
  EXPECT_THROW(b - b, DTypeError);
  EXPECT_THROW(gelu(i), DTypeError);
  EXPECT_THROW(pow(i, -1), ValueError);
  EXPECT_EQ(sign(b).dtype(), kBool);
  expect_close(~(i > 1), {1, 0, 0});
  EXPECT_THROW(~i, DTypeError);
}

// Floats to integers truncate, saturate at the type's limits and take NaN to 0, on every device
// (Note [Float to int]); to bool, anything not zero (NaN included) is true; float64 to float16
// rounds through float32, as PyTorch.
TEST_P(Elementwise, ConversionsOfEdgeValuesAreDefined) {
  const Tensor x = tensor(std::vector<double>{NAN, INFINITY, -INFINITY, 1e20, -1e20, 300.7, -300.7, -0.5, 2.9}).to(dev());
  EXPECT_EQ(x.to(kInt64).cpu().to_vector<int64_t>(),
            (std::vector<int64_t>{0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 300, -300, 0, 2}));
  EXPECT_EQ(x.to(kInt32).cpu().to_vector<int32_t>(),
            (std::vector<int32_t>{0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 300, -300, 0, 2}));
  EXPECT_EQ(x.to(kInt8).cpu().to_vector<int8_t>(), (std::vector<int8_t>{0, 127, -128, 127, -128, 127, -128, 0, 2}));
  EXPECT_EQ(x.to(kUInt8).cpu().to_vector<uint8_t>(), (std::vector<uint8_t>{0, 255, 0, 255, 0, 255, 0, 0, 2}));
  EXPECT_EQ(x.to(kFloat32).to(kInt16).cpu().to_vector<int16_t>(),
            (std::vector<int16_t>{0, 32767, -32768, 32767, -32768, 300, -300, 0, 2}));
  EXPECT_EQ(values(x.to(kBool)), (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(values(full({2}, 0.5, TensorOptions().dtype(kBool).device(dev()))), (std::vector<double>{1, 1}));
  // 1 + 2^-11 + 2^-40: nearest float16 is 1 + 2^-10, but through float32 (1 + 2^-11, a tie) it
  // rounds to even, 1.
  const Tensor tie = tensor(std::vector<double>{1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}).to(dev());
  EXPECT_EQ(values(tie.to(kFloat16))[0], 1.0);
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
  EXPECT_EQ(promote_types(kUInt8, kInt8), kInt16);
  EXPECT_EQ(promote_types(kInt16, kInt32), kInt32);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(exp(i).dtype(), kFloat32);
  EXPECT_THROW(tensor({true}) - tensor({false}), DTypeError);
}

TEST_P(Elementwise, EveryDtypeRoundTrips) {
  for (DType d : {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
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
