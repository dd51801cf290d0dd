// The errors of the composite nn functions (losses, linear, dropout): each names the function
// the user called and its own argument, never an op it is built from (Note [Public op names]).

#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;

std::string mismatch(const char* first, const char* second, const char* argument, const char* op) {
  return std::string("Expected all tensors to be on the same device, but found at least two devices, ") + first + " and " +
         second + "! (when checking argument '" + argument + "' of '" + op + "')";
}

// Runs `f`, which must throw E, and returns the message.
template <class E, class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong error type: ") + e.what();
  }
  return "no error";
}

TEST(LossErrors, DeviceMismatchNamesTheTargetOfTheLoss) {
  const Tensor logits = randn({3, 4}).to("sim:0");
  const Tensor target = tensor({1L, 0L, 3L});
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { nn::functional::cross_entropy(logits, target); }),
            mismatch("sim:0", "cpu", "target", "cross_entropy"));
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { nn::functional::nll_loss(log_softmax(logits, 1), target); }),
            mismatch("sim:0", "cpu", "target", "nll_loss"));
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { locus::mse_loss(logits, randn({3, 4})); }),
            mismatch("sim:0", "cpu", "target", "mse_loss"));
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { nn::functional::cross_entropy(randn({3, 4}), target.to("sim:1")); }),
            mismatch("cpu", "sim:1", "target", "cross_entropy"));
}

// An unbatched input [C] takes a 0-dim target. On the CPU it is not a number that may join
// another device: as PyTorch's nll_loss, the class losses refuse it (it used to reach an inner
// eq and report "argument 'other' of 'eq'").
TEST(LossErrors, ZeroDimCpuTargetOfAnUnbatchedInputIsAMismatch) {
  const Tensor logits = randn({4}).to("sim:0");
  const Tensor target = tensor(2L);
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { nn::functional::cross_entropy(logits, target); }),
            mismatch("sim:0", "cpu", "target", "cross_entropy"));
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { nn::functional::nll_loss(logits, target); }),
            mismatch("sim:0", "cpu", "target", "nll_loss"));
  EXPECT_NEAR(nn::functional::cross_entropy(logits, target.to("sim:0")).item<float>(),
              nn::functional::cross_entropy(logits.cpu(), target).item<float>(), 1e-6);
  // mse_loss is elementwise, as PyTorch's: a 0-dim CPU target joins a 0-dim input anywhere.
  EXPECT_FLOAT_EQ(locus::mse_loss(tensor(3.f).to("sim:0"), tensor(1.f)).item<float>(), 4.f);
}

TEST(LossErrors, DTypeAndShapeErrorsNameTheLoss) {
  const Tensor x = randn({3, 4});
  EXPECT_EQ(message_of<DTypeError>([&] { nn::functional::cross_entropy(x, tensor({1, 2, 3}).to(kInt32)); }),
            "[locus::cross_entropy] expects class indices of dtype int64 as target, got int32; convert with .to(kInt64)");
  EXPECT_EQ(message_of<DTypeError>([&] { nn::functional::nll_loss(x, tensor({1, 2, 3}).to(kInt32)); }),
            "[locus::nll_loss] expects class indices of dtype int64 as target, got int32; convert with .to(kInt64)");
  EXPECT_EQ(message_of<ShapeError>([&] { nn::functional::cross_entropy(x, tensor({1L, 2L})); }),
            "[locus::cross_entropy] expects a target of the input's shape without the class dim 1, got input [3, 4] and "
            "target [2]");
  EXPECT_EQ(message_of<ShapeError>([&] { nn::functional::cross_entropy(randn({4}), tensor({1L})); }),
            "[locus::cross_entropy] expects a 0-dim target for an unbatched [C] input, got input [4] and target [1]");
  // A 0-dim input used to fail inside log_softmax ("dimension out of range").
  EXPECT_EQ(message_of<ShapeError>([&] { nn::functional::cross_entropy(tensor(1.f), tensor(0L)); }),
            "[locus::cross_entropy] expects an input of at least one dimension ([C], [N, C] or [N, C, d1, ...]), got "
            "input [] and target []");
  EXPECT_EQ(message_of<ShapeError>([&] { nn::functional::cross_entropy(x, randn({3, 5})); }),
            "[locus::cross_entropy] expects class probabilities of the input's shape (a floating target), or int64 "
            "class indices, got input [3, 4] and target [3, 5]");
  // PyTorch: "nll_loss_out_frame" not implemented for 'Long'.
  EXPECT_EQ(message_of<DTypeError>([&] { nn::functional::nll_loss(tensor({1L, 2L, 3L, 4L}).reshape({2, 2}), tensor({1L, 0L})); }),
            "[locus::nll_loss] expects floating log-probabilities as input, got int64; pass log_softmax(x, 1) of the "
            "scores");
  EXPECT_EQ(message_of<ShapeError>([&] { locus::mse_loss(randn({3}), randn({2})); }),
            "[locus::mse_loss] input shape [3] and target shape [2] differ");
  // PyTorch: "mse_cpu" not implemented for 'Long'.
  EXPECT_EQ(message_of<DTypeError>([&] { locus::mse_loss(tensor({1L, 2L}), tensor({1L, 3L})); }),
            "[locus::mse_loss] needs a floating input or target, got int64 and int64; convert with .to(kFloat32)");
}

// PyTorch's mse_loss computes in the common dtype: a bool or integer target joins a floating
// input (it used to fail inside sub, "[locus::sub] ... bool").
TEST(LossErrors, MseLossPromotesTargetsAsPyTorch) {
  const Tensor input = tensor({0.5f, 2.f});
  EXPECT_FLOAT_EQ(locus::mse_loss(input, tensor({true, false})).item<float>(), 2.125f);
  EXPECT_FLOAT_EQ(locus::mse_loss(input, tensor({1L, 2L})).item<float>(), 0.125f);
  const Tensor wide = locus::mse_loss(input, tensor({1.0, 2.0}).to(kFloat64));
  EXPECT_EQ(wide.dtype(), kFloat64);
  EXPECT_DOUBLE_EQ(wide.item<double>(), 0.125);
}

TEST(LinearFunction, ComputesWhatTheLayerDoes) {
  manual_seed(0);
  nn::Linear fc(3, 2);
  const Tensor x = randn({4, 3});
  EXPECT_TRUE(equal(locus::linear(x, fc->weight, fc->bias), fc(x)));
  const Tensor w = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).reshape({2, 3});
  const Tensor b = tensor({0.5, -0.5});
  const Tensor v = tensor({1.0, 0.0, -1.0});
  expect_close(locus::linear(v, w, b), {-1.5, -2.5});
  expect_close(locus::linear(v.reshape({1, 1, 3}), w), {-2, -2});
  EXPECT_EQ(locus::linear(v.reshape({1, 1, 3}), w).shape(), (Shape{1, 1, 2}));
  // Differentiable through every argument.
  Tensor wg = w.clone().requires_grad_(), bg = b.clone().requires_grad_();
  locus::linear(v, wg, bg).sum().backward();
  expect_close(wg.grad(), {1, 0, -1, 1, 0, -1});
  expect_close(bg.grad(), {1, 1});
}

TEST(LinearFunction, ErrorsNameLinearAndItsArguments) {
  const Tensor x = randn({2, 3}).to("sim:0");
  const Tensor w = randn({4, 3}).to("sim:0");
  const Tensor b = randn({4}).to("sim:0");
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { locus::linear(x, w.cpu(), b); }), mismatch("sim:0", "cpu", "weight", "linear"));
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { locus::linear(x, w, b.to("sim:1")); }),
            mismatch("sim:0", "sim:1", "bias", "linear"));
  EXPECT_EQ(message_of<DeviceMismatchError>([&] { locus::linear(x, w, tensor(1.f)); }), mismatch("sim:0", "cpu", "bias", "linear"));
  EXPECT_EQ(message_of<DTypeError>([&] { locus::linear(x, w.to(kFloat64), b); }),
            "[locus::linear] expects input, weight and bias of one dtype, got float32, float64 and float32; convert "
            "with .to(dtype)");
  EXPECT_EQ(message_of<DTypeError>([&] { locus::linear(x, w.to(kFloat64)); }),
            "[locus::linear] expects input, weight and bias of one dtype, got float32, float64 (no bias); convert with "
            ".to(dtype)");
  EXPECT_EQ(message_of<ShapeError>([&] { locus::linear(x, randn({4, 5}).to("sim:0"), b); }),
            "[locus::linear] expects the input's last dimension to be the weight's in_features (dim 1): input [2, 3], "
            "weight [4, 5], bias [4]");
  EXPECT_EQ(message_of<ShapeError>([&] { locus::linear(x, w, randn({5}).to("sim:0")); }),
            "[locus::linear] expects a bias of shape [out_features] (the weight's dim 0): input [2, 3], weight [4, 3], "
            "bias [5]");
  EXPECT_EQ(message_of<ShapeError>([&] { locus::linear(x, randn({3}).to("sim:0")); }),
            "[locus::linear] expects a 2-D weight [out_features, in_features]: input [2, 3], weight [3]");
  EXPECT_EQ(message_of<ShapeError>([&] { locus::linear(tensor(1.f).to("sim:0"), w); }),
            "[locus::linear] expects an input with at least one dimension: input [], weight [4, 3]");
  // An error of the product itself still names linear.
  EXPECT_EQ(message_of<DTypeError>([&] { locus::linear(ones({1, 2}, TensorOptions().dtype(kBool)), ones({2, 2}, TensorOptions().dtype(kBool))); }),
            "[locus::linear] is not supported for bool tensors");
}

TEST(DropoutFunction, MatchesTheLayerAndPyTorchsRules) {
  const Tensor x = ones({1000});
  EXPECT_TRUE(locus::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(locus::dropout(x, 0.0, true).is_same(x));
  EXPECT_TRUE(equal(locus::dropout(x, 1.0, true), zeros({1000})));
  manual_seed(7);
  const Tensor y = locus::dropout(x, 0.25, true);
  manual_seed(7);
  nn::Dropout layer(0.25);
  EXPECT_TRUE(equal(y, layer(x)));
  int64_t kept = 0;
  for (float v : y.to_vector<float>()) {
    if (v == 0.f) continue;
    ++kept;
    EXPECT_FLOAT_EQ(v, 1.f / 0.75f);
  }
  EXPECT_GT(kept, 650);
  EXPECT_LT(kept, 850);
  EXPECT_EQ(locus::dropout(x.to("sim:0"), 0.5, true).device(), Device("sim:0"));
}

TEST(DropoutFunction, ErrorsNameDropout) {
  EXPECT_EQ(message_of<ValueError>([] { locus::dropout(ones({2}), 1.5, true); }),
            "[locus::dropout] probability has to be between 0 and 1, but got 1.500000");
  EXPECT_EQ(message_of<ValueError>([] { locus::dropout(ones({2}), -0.1, false); }),
            "[locus::dropout] probability has to be between 0 and 1, but got -0.100000");
  EXPECT_EQ(message_of<DTypeError>([] { locus::dropout(tensor({1L, 2L}), 0.5, true); }),
            "[locus::dropout] needs a floating input, got int64; convert with .to(kFloat32)");
  EXPECT_NO_THROW(locus::dropout(tensor({1L, 2L}), 0.5, false));
}

}  // namespace
}  // namespace locus
