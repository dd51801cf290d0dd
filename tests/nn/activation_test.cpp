// The activation modules and functions of activation.h against PyTorch 1.13's values and reprs
// (the expected numbers are nn.<Module>(...)(x) printed by PyTorch for the x below), their
// options, the in-place forms, and GELU's approximate with Linear's fused epilogue.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "locus/locus.h"
#include "locus/nn.h"

namespace locus {
namespace {

namespace F = nn::functional;

Tensor input(Device device = Device("cpu")) { return tensor({-2.0, -0.5, 0.0, 0.5, 2.0, 7.0}).to(device); }

// Within float32's accuracy: PyTorch's own float32 results are not always correctly rounded
// (its exact GELU at -2 is 4e-6 off), so the bound is relative 1e-5.
void expect_values(const Tensor& got, const std::vector<double>& want) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  const std::vector<double> v = got.detach().cpu().to(kFloat64).to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-5 * std::abs(want[i]) + 1e-7) << "element " << i;
}

std::vector<Device> devices() { return {Device("cpu"), Device("sim:0")}; }

TEST(Activation, ModulesMatchPyTorch) {
  for (const Device& d : devices()) {
    SCOPED_TRACE(d.str());
    expect_values(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(input(d)), {-0.4, -0.1, 0, 0.5, 2, 7});
    expect_values(nn::ELU(nn::ELUOptions().alpha(0.5))(input(d)), {-0.432332367, -0.196734667, 0, 0.5, 2, 7});
    expect_values(nn::SELU()(input(d)), {-1.52016652, -0.691758156, 0, 0.525350511, 2.10140204, 7.35490704});
    expect_values(nn::SiLU()(input(d)), {-0.238405839, -0.188770339, 0, 0.311229676, 1.76159406, 6.99362278});
    expect_values(nn::Mish()(input(d)), {-0.252501458, -0.22074376, 0, 0.375245243, 1.943959, 6.99998856});
    expect_values(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(5))(input(d)),
                  {0.00907496456, 0.156630844, 0.346573591, 0.656630814, 2.00907493, 7});
    expect_values(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(1.5))(input(d)), {-0.5, -0.5, 0, 0.5, 1.5, 1.5});
    expect_values(nn::ReLU6()(input(d)), {0, 0, 0, 0.5, 2, 6});
    expect_values(nn::Hardsigmoid()(input(d)), {0.166666672, 0.416666657, 0.5, 0.583333313, 0.833333313, 1});
    expect_values(nn::Hardswish()(input(d)), {-0.333333343, -0.208333328, 0, 0.291666657, 1.66666663, 7});
    expect_values(nn::LogSigmoid()(input(d)),
                  {-2.12692809, -0.974076986, -0.693147182, -0.474076986, -0.126928017, -0.000911466486});
    expect_values(nn::GELU(nn::GELUOptions().approximate("tanh"))(input(d)),
                  {-0.0454022884, -0.154285997, 0, 0.345714003, 1.95459771, 7});
    expect_values(nn::GELU()(input(d)), {-0.0455000997, -0.154268786, 0, 0.345731199, 1.95449996, 7});
    expect_values(nn::Softmax(0)(input(d)),
                  {0.000122208512, 0.000547700562, 0.000903005654, 0.00148880458, 0.00667235907, 0.990265906});
    expect_values(nn::LogSoftmax(nn::LogSoftmaxOptions(0))(input(d)),
                  {-9.00978184, -7.50978184, -7.00978184, -6.50978184, -5.00978184, -0.00978176203});
  }
}

TEST(Activation, ReprIsPyTorchs) {
  EXPECT_EQ(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))->repr(), "LeakyReLU(negative_slope=0.2)");
  EXPECT_EQ(nn::LeakyReLU(nn::LeakyReLUOptions().inplace(true))->repr(), "LeakyReLU(negative_slope=0.01, inplace=True)");
  EXPECT_EQ(nn::ELU(nn::ELUOptions().alpha(0.5))->repr(), "ELU(alpha=0.5)");
  EXPECT_EQ(nn::ELU(nn::ELUOptions().inplace(true))->repr(), "ELU(alpha=1.0, inplace=True)");
  EXPECT_EQ(nn::SELU()->repr(), "SELU()");
  EXPECT_EQ(nn::SELU(true)->repr(), "SELU(inplace=True)");
  EXPECT_EQ(nn::SiLU()->repr(), "SiLU()");
  EXPECT_EQ(nn::Mish()->repr(), "Mish()");
  EXPECT_EQ(nn::Softplus()->repr(), "Softplus(beta=1, threshold=20)");
  EXPECT_EQ(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(5))->repr(), "Softplus(beta=2, threshold=5)");
  EXPECT_EQ(nn::Softplus(nn::SoftplusOptions().beta(0.5))->repr(), "Softplus(beta=0.5, threshold=20)");
  EXPECT_EQ(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(1.5))->repr(), "Hardtanh(min_val=-0.5, max_val=1.5)");
  EXPECT_EQ(nn::Hardtanh(nn::HardtanhOptions().inplace(true))->repr(), "Hardtanh(min_val=-1.0, max_val=1.0, inplace=True)");
  EXPECT_EQ(nn::ReLU6()->repr(), "ReLU6()");
  EXPECT_EQ(nn::ReLU6(true)->repr(), "ReLU6(inplace=True)");
  EXPECT_EQ(nn::Hardsigmoid()->repr(), "Hardsigmoid()");
  EXPECT_EQ(nn::Hardswish()->repr(), "Hardswish()");
  EXPECT_EQ(nn::LogSigmoid()->repr(), "LogSigmoid()");
  EXPECT_EQ(nn::Softmax(1)->repr(), "Softmax(dim=1)");
  EXPECT_EQ(nn::LogSoftmax(-1)->repr(), "LogSoftmax(dim=-1)");
  EXPECT_EQ(nn::GELU()->repr(), "GELU(approximate='none')");
  EXPECT_EQ(nn::GELU(nn::GELUOptions().approximate("tanh"))->repr(), "GELU(approximate='tanh')");
}

TEST(Activation, InplaceWritesIntoTheInput) {
  for (const Device& d : devices()) {
    Tensor x = input(d);
    const Tensor y = nn::LeakyReLU(nn::LeakyReLUOptions().inplace(true))(x);
    EXPECT_TRUE(y.is_same(x));
    expect_values(x, {-0.02, -0.005, 0, 0.5, 2, 7});
    x = input(d);
    F::hardtanh(x, F::HardtanhFuncOptions().inplace(true));
    expect_values(x, {-1, -0.5, 0, 0.5, 1, 1});
    x = input(d);
    F::relu6(x, F::ReLU6FuncOptions(true));
    expect_values(x, {0, 0, 0, 0.5, 2, 6});
    x = input(d);
    F::elu(x, F::ELUFuncOptions().inplace(true));
    expect_values(x, {-0.864664733, -0.393469334, 0, 0.5, 2, 7});
    x = input(d);
    F::selu(x, true);
    expect_values(x, {-1.52016652, -0.691758156, 0, 0.525350511, 2.10140204, 7.35490704});
    x = input(d);
    F::relu(x, F::ReLUFuncOptions().inplace(true));
    expect_values(x, {0, 0, 0, 0.5, 2, 7});
  }
  // Writing into a tensor that requires grad would lose the graph: refused, as by every in-place op.
  Tensor leaf = input().requires_grad_();
  EXPECT_THROW(F::leaky_relu(leaf, F::LeakyReLUFuncOptions().inplace(true)), Error);
}

TEST(Activation, FunctionalMatchesModules) {
  const Tensor x = input();
  EXPECT_TRUE(equal(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)),
                    nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(x)));
  EXPECT_TRUE(equal(F::gelu(x, F::GELUFuncOptions().approximate("tanh")), gelu(x, "tanh")));
  EXPECT_TRUE(equal(F::gelu(x), gelu(x)));
  EXPECT_TRUE(equal(F::softplus(x, F::SoftplusFuncOptions().beta(2)), softplus(x, 2)));
  EXPECT_TRUE(equal(F::silu(x), silu(x)));
  EXPECT_TRUE(equal(F::mish(x), mish(x)));
  EXPECT_TRUE(equal(F::hardsigmoid(x), hardsigmoid(x)));
  EXPECT_TRUE(equal(F::hardswish(x), hardswish(x)));
  EXPECT_TRUE(equal(F::logsigmoid(x), logsigmoid(x)));
  EXPECT_TRUE(equal(F::sigmoid(x), sigmoid(x)));
  EXPECT_TRUE(equal(F::tanh(x), tanh(x)));
  EXPECT_TRUE(equal(F::relu(x), relu(x)));
  EXPECT_TRUE(equal(F::softmax(x, 0), softmax(x, 0)));
  EXPECT_TRUE(equal(F::log_softmax(x, F::SoftmaxFuncOptions(0)), log_softmax(x, 0)));
  const Tensor h = x.to(kFloat16);
  const Tensor s = F::softmax(h, F::SoftmaxFuncOptions(0).dtype(kFloat64));
  EXPECT_EQ(s.dtype(), kFloat64);
  EXPECT_TRUE(allclose(s, softmax(h.to(kFloat64), 0)));
}

TEST(Activation, ArgumentErrorsAsPyTorch) {
  EXPECT_THROW(nn::Hardtanh(nn::HardtanhOptions().min_val(1).max_val(1)), ValueError);
  EXPECT_THROW(F::gelu(input(), F::GELUFuncOptions().approximate("erf")), ValueError);
  EXPECT_THROW(nn::GELU(nn::GELUOptions().approximate("tan"))(input()), ValueError);
  const Tensor ints = tensor({-1, 0, 3});
  EXPECT_THROW(F::leaky_relu(ints), DTypeError);
  EXPECT_THROW(F::silu(ints), DTypeError);
  EXPECT_THROW(F::softplus(ints), DTypeError);
  EXPECT_THROW(F::relu6(tensor({true, false})), DTypeError);
  EXPECT_THROW(F::hardtanh(ints.to(kUInt8)), ValueError);  // negative default bound
  // hardtanh and relu6 take integers and keep their dtype, as PyTorch's
  EXPECT_EQ(F::relu6(tensor({-1, 3, 9})).tolist<int64_t>().values, (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(F::hardtanh(ints, F::HardtanhFuncOptions().min_val(-0.5).max_val(1.5)).dtype(), kInt64);
}

TEST(Activation, GeluTanhIsNotFoldedIntoLinear) {
  // Sequential folds an exact GELU after a Linear into its product; the tanh form must run itself.
  manual_seed(0);
  nn::Linear fc(4, 3);
  nn::Sequential model{fc, nn::GELU(nn::GELUOptions().approximate("tanh"))};
  const Tensor x = randn({5, 4});
  const Tensor want = gelu(locus::linear(x, fc->weight, fc->bias), "tanh");
  EXPECT_TRUE(allclose(model(x), want, 1e-6, 1e-7));
  nn::Sequential exact{fc, nn::GELU()};
  EXPECT_TRUE(allclose(exact(x), gelu(locus::linear(x, fc->weight, fc->bias)), 1e-5, 1e-6));
}

TEST(Activation, ModulesTrainThroughBackward) {
  for (const Device& d : devices()) {
    const Tensor x = tensor({-2.0, -0.5, 0.5, 2.0}, TensorOptions().dtype(kFloat64)).to(d).requires_grad_();
    nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(x).sum().backward();
    expect_values(x.grad(), {0.2, 0.2, 1, 1});
  }
}

}  // namespace
}  // namespace locus
