// Autograd: every differentiable op's gradient against central finite differences in float64,
// on every device; accumulation, seeds, no-grad mode, detach, device crossing, and the errors.

#include <functional>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::OnEachDevice;
using testing::values;

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Input {
  std::vector<double> v;
  Shape shape;
};

// Compares backward() with (f(x + h) - f(x - h)) / 2h for every element of every input.
void gradcheck(const Fn& f, const std::vector<Input>& inputs, Device dev, double tol = 1e-6) {
  std::vector<Tensor> x;
  for (const Input& in : inputs) x.push_back(tensor(in.v, in.shape, kFloat64).to(dev).requires_grad_());
  const Tensor y = f(x);
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  const double h = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(x[i].grad().defined()) << "input " << i << " got no gradient";
    EXPECT_EQ(x[i].grad().device(), dev);
    const std::vector<double> analytic = values(x[i].grad());
    for (size_t j = 0; j < inputs[i].v.size(); ++j) {
      auto at = [&](double delta) {
        NoGradGuard no_grad;
        std::vector<Tensor> moved;
        for (size_t k = 0; k < inputs.size(); ++k) {
          std::vector<double> v = inputs[k].v;
          if (k == i) v[j] += delta;
          moved.push_back(tensor(v, inputs[k].shape, kFloat64).to(dev));
        }
        return values(f(moved).sum())[0];
      };
      const double numeric = (at(h) - at(-h)) / (2 * h);
      EXPECT_NEAR(analytic[j], numeric, tol * (1 + std::abs(numeric))) << "input " << i << " element " << j;
    }
  }
}

const Input kA{{0.5, -1.2, 2.0, 0.3, -0.7, 1.1}, Shape{2, 3}};
const Input kB{{1.3, 0.4, -0.6}, Shape{3}};
const Input kPos{{0.5, 1.2, 2.0, 0.3, 0.7, 1.1}, Shape{2, 3}};

TEST_P(OnEachDevice, ElementwiseGradients) {
  const Device d = dev();
  gradcheck([](auto& x) { return add(x[0], x[1], 2.5); }, {kA, kB}, d);
  gradcheck([](auto& x) { return sub(x[0], x[1], 0.5); }, {kA, kB}, d);
  gradcheck([](auto& x) { return x[0] * x[1]; }, {kA, kB}, d);
  gradcheck([](auto& x) { return x[0] / x[1]; }, {kA, kB}, d);
  gradcheck([](auto& x) { return pow(x[0], x[1]); }, {kPos, kB}, d);
  gradcheck([](auto& x) { return maximum(x[0], x[1]); }, {kA, kB}, d);
  gradcheck([](auto& x) { return minimum(x[0], x[1]); }, {kA, kB}, d);
  gradcheck([](auto& x) { return (x[0] + 2.0) * 3.0 - 1.0; }, {kA}, d);
  gradcheck([](auto& x) { return x[0] / 4.0; }, {kA}, d);
  gradcheck([](auto& x) { return pow(x[0], 3.0); }, {kA}, d);
  gradcheck([](auto& x) { return neg(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return abs(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return exp(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return log(x[0]); }, {kPos}, d);
  gradcheck([](auto& x) { return sqrt(x[0]); }, {kPos}, d);
  gradcheck([](auto& x) { return tanh(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return sigmoid(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return relu(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return gelu(x[0]); }, {Input{{0.0, -3.0, 0.4, 2.5, -0.2, 1e-3}, Shape{6}}}, d);
  gradcheck([](auto& x) { return clamp(x[0], -1.0, 1.0); }, {kA}, d);
  gradcheck([](auto& x) { return where(gt(x[0], 0.0), x[0], x[1]); }, {kA, kB}, d);
}

// The ops the op table added, each against finite differences (inputs away from the kinks of
// the rounding and modulo functions).
TEST_P(OnEachDevice, NewElementwiseGradients) {
  const Device d = dev();
  const Input kOffGrid{{0.37, -1.21, 2.43, 0.29, -0.73, 1.13}, Shape{2, 3}};
  const Input kDivisor{{1.3, 0.47, -0.61}, Shape{3}};
  gradcheck([](auto& x) { return sin(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return cos(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return log1p(x[0]); }, {kPos}, d);
  gradcheck([](auto& x) { return expm1(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return rsqrt(x[0]); }, {kPos}, d);
  gradcheck([](auto& x) { return erf(x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return floor(x[0]) + ceil(x[0]) + round(x[0]) + trunc(x[0]) + sign(x[0]); }, {kOffGrid}, d);
  gradcheck([](auto& x) { return remainder(x[0], x[1]); }, {kOffGrid, kDivisor}, d);
  gradcheck([](auto& x) { return fmod(x[0], x[1]); }, {kOffGrid, kDivisor}, d);
  gradcheck([](auto& x) { return div(x[0], x[1], "floor") + div(x[0], x[1], "trunc") + x[0]; }, {kOffGrid, kDivisor}, d);
  gradcheck([](auto& x) { return remainder(x[0], 0.7); }, {kOffGrid}, d);
  gradcheck([](auto& x) { return 2.0 - x[0]; }, {kA}, d);
  gradcheck([](auto& x) { return 1.5 / x[0]; }, {kPos}, d);
  gradcheck([](auto& x) { return x[0].max(); }, {kA}, d);
  gradcheck([](auto& x) { return x[0].min(1).values; }, {kA}, d);
  gradcheck([](auto& x) { return x[0].max(0, true).values; }, {kA}, d);
  // floor_divide has no derivative in PyTorch either: backward says so.
  const Tensor a = tensor({1.5, 2.5}, kFloat64).to(d).requires_grad_();
  EXPECT_THROW(floor_divide(a, 2.0).sum().backward(), NotImplementedError);
}

TEST_P(OnEachDevice, ReductionSoftmaxAndMatmulGradients) {
  const Device d = dev();
  gradcheck([](auto& x) { return x[0].sum(); }, {kA}, d);
  gradcheck([](auto& x) { return x[0].sum(Shape{0}); }, {kA}, d);
  gradcheck([](auto& x) { return mul(x[0].mean(Shape{1}, true), x[0]); }, {kA}, d);
  gradcheck([](auto& x) { return mul(softmax(x[0], 1), tensor({1.0, 2.0, 3.0}).to(x[0].device())); }, {kA}, d);
  gradcheck([](auto& x) { return mul(log_softmax(x[0], 0), tensor({1.0, -2.0, 0.5}).to(x[0].device())); }, {kA}, d);
  const Input m{{0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9, -1.0, 1.1, 1.2}, Shape{3, 4}};
  gradcheck([](auto& x) { return matmul(x[0], x[1]); }, {kA, m}, d);
  gradcheck([](auto& x) { return matmul(x[0].view({1, 2, 3}).expand({2, 2, 3}), x[1]); }, {kA, m}, d);
  gradcheck([](auto& x) { return matmul(x[0], x[1]); }, {kB, m}, d);  // 1-D @ 2-D
  gradcheck([](auto& x) { return mm(x[1].t(), x[0].t()); }, {kA, m}, d);
}

TEST_P(OnEachDevice, ViewAndJoinGradients) {
  const Device d = dev();
  const Tensor w = tensor({1.0, -2.0, 3.0, 0.5, 4.0, -1.5}).to(d);
  gradcheck([&](auto& x) { return mul(x[0].reshape({6}), w); }, {kA}, d);
  gradcheck([&](auto& x) { return mul(x[0].t().contiguous().view({6}), w); }, {kA}, d);
  gradcheck([&](auto& x) { return mul(x[0].permute({1, 0}).flatten(), w); }, {kA}, d);
  gradcheck([](auto& x) { return mul(x[0].narrow(1, 1, 2), 3.0); }, {kA}, d);
  gradcheck([](auto& x) { return mul(x[0].select(0, 1), x[0].select(0, 0)); }, {kA}, d);
  gradcheck([](auto& x) { return x[0].slice(1, 0, 3, 2).unsqueeze(0).squeeze(); }, {kA}, d);
  gradcheck([](auto& x) { return mul(x[0].expand({4, 3}), x[0].expand({4, 3})); }, {kB}, d);
  gradcheck([](auto& x) { return mul(cat({x[0], x[1].view({1, 3})}, 0), 2.0); }, {kA, kB}, d);
  gradcheck([](auto& x) { return stack({x[0], mul(x[0], x[0])}, 1); }, {kB}, d);
  gradcheck([](auto& x) { return x[0].clone(); }, {kA}, d);
}

TEST_P(OnEachDevice, AccumulationSeedsAndDeviceCrossing) {
  const Device d = dev();
  const Tensor x = tensor({1.0, 2.0, 3.0}).to(d).requires_grad_();
  mul(x, x).sum().backward();
  mul(x, 3.0).sum().backward();  // grads add up across calls
  EXPECT_EQ(values(x.grad()), (std::vector<double>{5, 7, 9}));
  x.set_grad(Tensor());
  mul(x, x).backward(tensor({1.0, 0.0, -1.0}).to(d));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 0, -6}));
  // Two leaves handed the same upstream gradient do not share a buffer.
  const Tensor a = ones({2}, TensorOptions().device(d).requires_grad(true));
  const Tensor b = ones({2}, TensorOptions().device(d).requires_grad(true));
  add(a, b).sum().backward();
  {
    NoGradGuard g;
    a.grad().mul_(5.0);
  }
  EXPECT_EQ(values(b.grad()), (std::vector<double>{1, 1}));
  // A graph that crosses devices: the gradient lands on the leaf's own device.
  const Tensor leaf = tensor({1.0, -1.0}, TensorOptions().requires_grad(true));
  (leaf.to(d) * 2.0).to(Device("cpu")).sum().backward();
  EXPECT_EQ(leaf.grad().device(), Device("cpu"));
  EXPECT_EQ(values(leaf.grad()), (std::vector<double>{2, 2}));
  // float32 leaf through a float64 computation: gradient in the leaf's dtype.
  const Tensor f = tensor({1.f, 2.f}, TensorOptions().device(d).requires_grad(true));
  (f.to(kFloat64) * 2.0).sum().backward();
  EXPECT_EQ(f.grad().dtype(), kFloat32);
}

TEST_P(OnEachDevice, NoGradDetachAndErrors) {
  const Device d = dev();
  const Tensor x = ones({3}, TensorOptions().device(d).requires_grad(true));
  {
    NoGradGuard g;
    EXPECT_FALSE(is_grad_enabled());
    EXPECT_FALSE((x * 2.0).requires_grad());
  }
  EXPECT_TRUE(is_grad_enabled());
  const Tensor y = x * 2.0;
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(y.detach().requires_grad());
  EXPECT_THROW(y.backward(), ValueError);  // 3 elements, no seed
  EXPECT_THROW(y.detach().sum().backward(), ValueError);
  try {
    Tensor z = x;
    z.add_(1.0);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("NoGradGuard"), std::string::npos) << e.what();
  }
  {
    NoGradGuard g;
    Tensor z = x;
    z.mul_(3.0);  // how optimizers update parameters
  }
  EXPECT_EQ(values(x.detach()), (std::vector<double>{3, 3, 3}));
}

INSTANTIATE_TEST_SUITE_P(Devices, OnEachDevice, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
