// In-place ops in the graph (Note [In-place ops in the graph], Note [Views and in-place ops]):
// each recorded in-place program gives the gradients of the same program written out of place;
// version counters stop a backward that would read overwritten values, with PyTorch's message;
// PyTorch's refusals for leaves.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::expect_error;
using testing::values;

Tensor wave(const Shape& shape, double a, double b) {
  return sin(arange(shape.numel(), TensorOptions().dtype(kFloat64)) * a + b).reshape(shape);
}

// The gradient of `program` with respect to a fresh leaf made from `x0`.
std::vector<double> gradient_of(const Tensor& x0, const std::function<Tensor(const Tensor&)>& program) {
  const Tensor x = x0.clone().requires_grad_();
  program(x).sum().backward();
  return values(x.grad());
}

TEST(InPlaceAutograd, ActivationsAndArithmeticOnNonLeavesMatchTheOutOfPlaceProgram) {
  const Tensor x0 = wave({3, 4}, 0.7, 0.2);
  const Tensor w = wave({3, 4}, 0.3, 1.0);
  auto in_place = [&](const Tensor& x) {
    Tensor h = x * 2;
    h.relu_();
    h.mul_(w);      // reads h's old value for w's gradient (none here) and w for h's
    h += x;         // out += identity
    h.sigmoid_();
    h.sub_(0.5);
    h.mul_(h);      // both operands alias the buffer it overwrites
    return h;
  };
  auto out_of_place = [&](const Tensor& x) { return (sigmoid(relu(x * 2) * w + x) - 0.5).pow(2); };
  expect_close(Tensor(tensor(gradient_of(x0, in_place), kFloat64)), gradient_of(x0, out_of_place), 1e-12, 1e-12);
}

TEST(InPlaceAutograd, AnOperandThatRequiresGradGetsItsGradientWhenSelfDoesNot) {
  const Tensor w = wave({4}, 0.5, 0.1).requires_grad_();
  Tensor acc = full({4}, 3.0, kFloat64);  // a plain tensor
  acc.mul_(w);                             // acc now has history: MulBackward0
  EXPECT_TRUE(acc.requires_grad());
  EXPECT_FALSE(acc.is_leaf());
  EXPECT_EQ(acc.grad_fn()->name(), "MulBackward0");
  acc.sum().backward();
  EXPECT_EQ(values(w.grad()), std::vector<double>(4, 3.0));  // d(3w)/dw, read from acc's old value
}

TEST(InPlaceAutograd, ModuleWithAnInPlaceReluTrains) {
  nn::Sequential net(nn::Linear(4, 6), nn::ReLU(nn::ReLUOptions().inplace(true)), nn::Linear(6, 2));
  nn::Sequential ref(nn::Linear(4, 6), nn::ReLU(), nn::Linear(6, 2));
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < net->parameters().size(); ++i) ref->parameters()[i].copy_(net->parameters()[i]);
  }
  const Tensor x = wave({5, 4}, 0.9, 0.0).to(kFloat32);
  net->forward(x).pow(2).sum().backward();
  ref->forward(x).pow(2).sum().backward();
  for (size_t i = 0; i < net->parameters().size(); ++i)
    expect_close(net->parameters()[i].grad(), values(ref->parameters()[i].grad()), 1e-6, 1e-6);
}

TEST(InPlaceAutograd, WritingIntoAViewRebasesItsBase) {
  const Tensor x0 = wave({3, 4}, 0.4, 0.3);
  const Tensor w = wave({4}, 0.8, 0.5).requires_grad_();
  auto in_place = [&](const Tensor& x) {
    Tensor y = x * 1.5;
    Tensor row = y.select(0, 1);
    row.mul_(w);                            // y's history becomes CopySlices
    EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
    Tensor col = y.narrow(1, 2, 1);         // a view made after the write
    col.exp_();
    return y * y;
  };
  auto out_of_place = [&](const Tensor& x) {
    const Tensor y = x * 1.5;
    const Tensor row1 = y.select(0, 1) * w;
    Tensor z = stack({y.select(0, 0), row1, y.select(0, 2)}, 0);
    const Tensor col = exp(z.narrow(1, 2, 1));
    z = cat({z.narrow(1, 0, 2), col, z.narrow(1, 3, 1)}, 1);
    return z * z;
  };
  const std::vector<double> expected = gradient_of(x0, out_of_place);
  const Tensor w_grad = w.grad().clone();
  w.set_grad(Tensor());
  expect_close(Tensor(tensor(gradient_of(x0, in_place), kFloat64)), expected, 1e-12, 1e-12);
  expect_close(w.grad(), values(w_grad), 1e-12, 1e-12);
}

TEST(InPlaceAutograd, AViewTakenBeforeTheWriteSeesTheNewHistory) {
  const Tensor x = wave({2, 3}, 0.6, 0.1).requires_grad_();
  Tensor y = x.clone();
  const Tensor first_row = y.select(0, 0);  // taken before the write below
  y.select(0, 1).mul_(4);                   // rebases y
  EXPECT_EQ(first_row.grad_fn()->name(), "AsStridedBackward0");
  (first_row.sum() + y.sum()).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 2, 2, 4, 4, 4}));
}

TEST(InPlaceAutograd, CopyFillAndIndexPutIntoTensorsInTheGraph) {
  const Tensor src = wave({2}, 0.9, 0.2).requires_grad_();
  const Tensor x = wave({2, 3}, 0.3, 0.0).requires_grad_();
  Tensor y = x * 2;
  y.narrow(1, 0, 1).squeeze(1).copy_(src * 3);  // column 0 from src
  y.narrow(1, 2, 1).zero_();                     // column 2 cut from x
  y.index_put_({indexing::TensorIndex(1), indexing::TensorIndex(1)}, src.sum());
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 2, 0, 0, 0, 0}));
  EXPECT_EQ(values(src.grad()), (std::vector<double>{4, 4}));
}

TEST(InPlaceAutograd, TernaryAndMaskedFormsAreRecorded) {
  const Tensor a = wave({4}, 0.5, 0.2).requires_grad_(), b = wave({4}, 0.7, 0.9).requires_grad_();
  Tensor y = a * 1.0;
  y.addcmul_(a, b, 0.5);
  y.masked_fill_(arange(4) == 2, 0.0);
  y.sum().backward();
  const std::vector<double> av = values(a), bv = values(b);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(values(a.grad())[i], i == 2 ? 0 : 1 + 0.5 * bv[i], 1e-12);
    EXPECT_NEAR(values(b.grad())[i], i == 2 ? 0 : 0.5 * av[i], 1e-12);
  }
}

// Each in-place form is one write, as PyTorch counts it, also those that compute out of place
// and write the result back through copy_.
TEST(InPlaceAutograd, EveryInPlaceFormCountsOneWrite) {
  Tensor x = zeros({3, 3});
  const Tensor mask = eye(3).to(kBool), index = zeros({1, 3}, kInt64), rows = tensor(std::vector<int64_t>{0, 2});
  const std::vector<std::pair<std::string, std::function<void()>>> writes = {
      {"add_", [&] { x.add_(1); }},
      {"fill_", [&] { x.fill_(2); }},
      {"copy_", [&] { x.copy_(ones({3, 3})); }},
      {"masked_fill_", [&] { x.masked_fill_(mask, 3.0); }},
      {"masked_scatter_", [&] { x.masked_scatter_(mask, ones({3, 3})); }},
      {"scatter_", [&] { x.scatter_(0, index, ones({1, 3})); }},
      {"scatter_add_", [&] { x.scatter_add_(0, index, ones({1, 3})); }},
      {"index_add_", [&] { x.index_add_(0, rows, ones({2, 3})); }},
      {"index_put_", [&] { x.index_put_({rows}, ones({2, 3})); }},
      {"tril_", [&] { x.tril_(); }},
      {"triu_", [&] { x.triu_(); }},
      {"bernoulli_", [&] { x.bernoulli_(0.5); }},
      {"uniform_", [&] { x.uniform_(); }},
  };
  for (const auto& [name, write] : writes) {
    const int64_t before = x._version();
    write();
    EXPECT_EQ(x._version(), before + 1) << name;
  }
}

TEST(InPlaceAutograd, ModifyingASavedTensorStopsBackwardWithPyTorchsMessage) {
  const Tensor x = ones({2, 3}, TensorOptions().dtype(kFloat32).requires_grad(true));
  Tensor y = x * 2;
  const Tensor z = y * y;  // MulBackward0 saves y (version 0)
  y.add_(1);               // version 1
  EXPECT_EQ(y._version(), 1);
  expect_error<ValueError>(
      [&] { z.sum().backward(); },
      "[locus::backward] one of the variables needed for gradient computation has been modified by an inplace "
      "operation: [torch.FloatTensor [2, 3]], which is output 0 of MulBackward0, is at version 1; expected version 0 "
      "instead. (It is read by MulBackward0; modify a clone() instead, or do the in-place op before the op that reads "
      "the tensor.)");
}

TEST(InPlaceAutograd, AnOutputSavedByItsOpIsCheckedToo) {
  const Tensor x = wave({3}, 0.5, 0.0).requires_grad_();
  Tensor e = exp(x);  // ExpBackward0 reads its output
  {
    NoGradGuard no_grad;
    e.mul_(2);
  }
  try {
    e.sum().backward();
    FAIL() << "no error";
  } catch (const ValueError& err) {
    EXPECT_NE(std::string(err.what()).find("[torch.DoubleTensor [3]], which is output 0 of ExpBackward0, is at version 1"),
              std::string::npos)
        << err.what();
  }
}

TEST(InPlaceAutograd, AnOpThatSavesNothingIsNotStoppedByAWrite) {
  const Tensor x = wave({3}, 0.5, 0.0).requires_grad_();
  Tensor y = x + 1;  // AddBackward0 reads neither operand
  Tensor z = y * 3;  // saves nothing of y either (the other operand is a number)
  y.relu_();
  (z.sum() + y.sum()).backward();
  std::vector<double> expected;
  for (double v : values(x)) expected.push_back(3 + (v + 1 > 0 ? 1 : 0));
  EXPECT_EQ(values(x.grad()), expected);
}

TEST(InPlaceAutograd, LeavesThatRequireGradAreRefusedAsPyTorchRefusesThem) {
  Tensor leaf = zeros({3}, TensorOptions().dtype(kFloat32).requires_grad(true));
  const int64_t version = leaf._version();
  expect_error<ValueError>([&] { leaf.add_(1); },
                           "[locus::add] a leaf Variable that requires grad is being used in an in-place operation "
                           "(write into a clone, or do it under NoGradGuard, as optimizers do)");
  expect_error<ValueError>([&] { leaf.narrow(0, 0, 2).mul_(2); },
                           "[locus::mul] a view of a leaf Variable that requires grad is being used in an in-place "
                           "operation (write into a clone, or do it under NoGradGuard)");
  EXPECT_EQ(values(leaf), (std::vector<double>{0, 0, 0}));  // intact
  EXPECT_EQ(leaf._version(), version);
  {
    NoGradGuard no_grad;
    leaf.add_(1);
  }
  EXPECT_EQ(leaf._version(), version + 1);
}

TEST(InPlaceAutograd, OutFormsStillRefuseInputsThatRequireGrad) {
  const Tensor a = ones({2}, TensorOptions().requires_grad(true));
  Tensor out = empty({2});
  EXPECT_THROW(add_out(out, a, a), ValueError);
}

}  // namespace
}  // namespace locus
