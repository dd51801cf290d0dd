// Custom autograd Functions as LibTorch writes them (autograd::Function<T>, AutogradContext):
// gradients, non-tensor arguments, saved data, needs_input_grad, several outputs, dirty and
// non-differentiable outputs, version checks, hooks, double backward, and the errors.

#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using autograd::AutogradContext;
using autograd::variable_list;
using testing::expect_error;
using testing::values;

struct ScaledProduct : autograd::Function<ScaledProduct> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b, double scale) {
    ctx->save_for_backward({a, b});
    ctx->saved_data["scale"] = scale;
    return a * b * scale;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const double s = ctx->saved_data["scale"].toDouble();
    return {grads[0] * saved[1] * s, grads[0] * saved[0] * s, Tensor()};
  }
};

TEST(CustomFunction, GradientsFlowAndTheNodeIsNamedAfterTheClass) {
  const Tensor a = tensor({1.0, 2.0}).requires_grad_(), b = tensor({3.0, 5.0});
  const Tensor y = ScaledProduct::apply(a, b, 2.0);
  ASSERT_TRUE(y.requires_grad());
  EXPECT_EQ(y.grad_fn()->name(), "ScaledProductBackward");
  ASSERT_EQ(y.grad_fn()->next_functions().size(), 2u);  // one edge per tensor argument
  EXPECT_FALSE(y.grad_fn()->next_functions()[1].is_valid());
  y.sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{6, 10}));
}

TEST(CustomFunction, NoInputRequiresGradNoNode) {
  const Tensor y = ScaledProduct::apply(tensor({1.0}), tensor({2.0}), 3.0);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(values(y), (std::vector<double>{6}));
}

struct SplitHalves : autograd::Function<SplitHalves> {
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    const int64_t n = x.size(0) / 2;
    Tensor index = arange(2);
    ctx->mark_non_differentiable({index});
    return {x.narrow(0, 0, n) * 1, x.narrow(0, n, n) * 10, index};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    // The second output got no gradient: materialized as zeros.
    return {cat({grads[0], grads[1] * 10}, 0)};
  }
};

TEST(CustomFunction, SeveralOutputsAndANonDifferentiableOne) {
  const Tensor x = tensor({1.0, 2.0, 3.0, 4.0}).requires_grad_();
  const auto out = SplitHalves::apply(x);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].output_nr(), 0u);
  EXPECT_EQ(out[1].output_nr(), 1u);
  EXPECT_FALSE(out[2].requires_grad());
  out[0].sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 1, 0, 0}));
}

struct DoubleInPlace : autograd::Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0] * 2}; }
};

TEST(CustomFunction, ADirtyInputTakesTheNodeAsItsHistory) {
  const Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = x * 3;
  const Tensor y = DoubleInPlace::apply(h);
  EXPECT_TRUE(y.is_same(h));
  EXPECT_EQ(h.grad_fn()->name(), "DoubleInPlaceBackward");
  EXPECT_EQ(values(h), (std::vector<double>{6, 12}));
  h.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{6, 6}));
}

struct Cube : autograd::Function<Cube> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const Tensor x = ctx->get_saved_variables()[0];
    return {grads[0] * 3 * x * x};  // differentiable: double backward works
  }
};

TEST(CustomFunction, DoubleBackwardThroughADifferentiableBackward) {
  const Tensor x = tensor({1.0, 2.0}).requires_grad_();
  const Tensor g = autograd::grad({Cube::apply(x).sum()}, {x}, {}, std::nullopt, true)[0];
  EXPECT_EQ(values(g), (std::vector<double>{3, 12}));
  EXPECT_EQ(values(autograd::grad({g.sum()}, {x})[0]), (std::vector<double>{6, 12}));
}

TEST(CustomFunction, HooksAndVersionChecksAsForBuiltInNodes) {
  const Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = x * 1;
  const Tensor y = Cube::apply(h);
  y.register_hook([](const Tensor& g) { return g * 0; });
  y.sum().backward(Tensor(), true);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 0}));
  h.add_(1);  // Cube saved h
  try {
    y.sum().backward();
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("is at version 1; expected version 0 instead. (It is read by CubeBackward;"),
              std::string::npos)
        << e.what();
  }
}

struct WrongCount : autograd::Function<WrongCount> {
  static Tensor forward(AutogradContext*, Tensor x, int64_t) { return x * 2; }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0]}; }
};

struct GradForANumber : autograd::Function<GradForANumber> {
  static Tensor forward(AutogradContext*, Tensor x, int64_t) { return x * 2; }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0], grads[0]}; }
};

TEST(CustomFunction, ABackwardWithTheWrongGradientsIsRefused) {
  const Tensor x = tensor({1.0}).requires_grad_();
  testing::expect_error<ValueError>([&] { WrongCount::apply(x, 3).sum().backward(); },
                                    "[locus::WrongCountBackward] function backward returned an incorrect number of "
                                    "gradients (expected 2, got 1)");
  testing::expect_error<ValueError>([&] { GradForANumber::apply(x, 3).sum().backward(); },
                                    "[locus::GradForANumberBackward] function backward returned a gradient different than "
                                    "an undefined tensor at position 2, but the corresponding forward input was not a tensor");
}

TEST(CustomFunction, IValueKeepsItsKind) {
  const IValue d = 2.5, i = int64_t{3}, s = "name", none;
  EXPECT_EQ(d.toDouble(), 2.5);
  EXPECT_EQ(i.toInt(), 3);
  EXPECT_EQ(s.toStringRef(), "name");
  EXPECT_TRUE(none.isNone());
  testing::expect_error<ValueError>([&] { (void)i.toDouble(); }, "[locus::IValue] expected Double but got Int");
}

}  // namespace
}  // namespace locus
