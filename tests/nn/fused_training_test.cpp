// The training step's fused kernels (Note [Fused kernels] in src/ops/fused.h) against the
// composed forms they replace and against float64: Linear with its bias and activation, the
// optimizers' one-pass update, cross_entropy's one-pass loss and gradient. The composed forms
// run on a sim device configured to lack the fused kernels; the fused ones on the CPU.

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "src/autograd/node.h"
#include "src/nn/linear_activation.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

// While alive, sim devices lack the fused kernels, so ops there take the composed path.
class ComposedOnSim {
 public:
  ComposedOnSim() : original_(sim::config()) {
    sim::Config c = original_;
    c.unsupported_ops = {"linear", "optimizer_step", "cross_entropy"};
    sim::configure(c);
  }
  ~ComposedOnSim() { sim::configure(original_); }
  ComposedOnSim(const ComposedOnSim&) = delete;
  ComposedOnSim& operator=(const ComposedOnSim&) = delete;

 private:
  sim::Config original_;
};

const Device kComposed("sim:0");

std::string grad_fn_name(const Tensor& t) { return t.impl()->grad_fn() ? t.impl()->grad_fn()->name() : "(none)"; }

// Tolerances for comparing a dtype's result with float64: relative, absolute.
std::pair<double, double> tolerance(DType d) {
  if (d == kFloat64) return {1e-12, 1e-12};
  if (d == kBFloat16) return {2e-2, 2e-2};
  if (d == kFloat16) return {2e-3, 2e-3};
  return {2e-5, 2e-5};
}

// A leaf of `dtype` on `device` holding `v`'s values.
Tensor leaf(const Tensor& v, DType dtype, Device device) {
  return v.to(dtype).to(device).clone().detach().requires_grad_(true);  // never the caller's storage
}

struct LinearCase {
  DType dtype;
  ops::Epilogue epilogue;
  Shape input;  // [..., 7]
  bool bias;
  bool transposed_weight;  // the weight a view of a [7, 4] leaf's transpose
};

void PrintTo(const LinearCase& c, std::ostream* os) { *os << dtype_name(c.dtype) << " input " << c.input; }

class FusedLinear : public ::testing::TestWithParam<LinearCase> {};

TEST_P(FusedLinear, MatchesTheComposedFormAndFloat64ForwardAndBackward) {
  const LinearCase c = GetParam();
  ComposedOnSim composed;
  manual_seed(7);
  const int64_t k = c.input.back(), n = 4;
  const Tensor xv = randn(c.input, kFloat64), wv = randn({n, k}, kFloat64) / 2, bv = randn({n}, kFloat64);
  Shape out_shape;
  for (size_t d = 0; d + 1 < c.input.size(); ++d) out_shape.push_back(c.input[d]);
  out_shape.push_back(n);
  const Tensor gy = randn(out_shape, kFloat64);
  struct Result {
    std::vector<double> y, gx, gw, gb;
  };
  auto run = [&](DType dtype, Device device) {
    const Tensor x = leaf(xv, dtype, device);
    const Tensor w_leaf = c.transposed_weight ? leaf(wv.t().contiguous(), dtype, device) : leaf(wv, dtype, device);
    const Tensor w = c.transposed_weight ? w_leaf.t() : w_leaf;
    const Tensor b = c.bias ? leaf(bv, dtype, device) : Tensor();
    const Tensor y = nn::linear_with_activation(x, w, b, c.epilogue);
    y.backward(gy.to(dtype).to(device));
    Result r{values(y), values(x.grad()), values(c.transposed_weight ? w_leaf.grad().t() : w_leaf.grad()), {}};
    if (c.bias) r.gb = values(b.grad());
    return r;
  };
  const Result fused = run(c.dtype, kCPU), same = run(c.dtype, kComposed), ref = run(kFloat64, kComposed);
  const auto tolerances = tolerance(c.dtype);
  const double rtol = tolerances.first, atol = tolerances.second;  // clang 14: a lambda cannot capture a structured binding
  auto check = [&](const std::vector<double>& got, const std::vector<double>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], atol + rtol * std::abs(want[i])) << what << " at " << i;
  };
  check(fused.y, ref.y, "output vs float64");
  check(fused.gx, ref.gx, "input grad vs float64");
  check(fused.gw, ref.gw, "weight grad vs float64");
  check(fused.gb, ref.gb, "bias grad vs float64");
  check(fused.y, same.y, "output vs composed");
  check(fused.gw, same.gw, "weight grad vs composed");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FusedLinear,
    ::testing::Values(LinearCase{kFloat32, ops::Epilogue::None, {5, 7}, true, false},
                      LinearCase{kFloat32, ops::Epilogue::Relu, {5, 7}, true, false},
                      LinearCase{kFloat32, ops::Epilogue::Gelu, {5, 7}, true, false},
                      LinearCase{kFloat32, ops::Epilogue::Relu, {2, 3, 7}, true, false},
                      LinearCase{kFloat32, ops::Epilogue::Relu, {7}, false, false},
                      LinearCase{kFloat32, ops::Epilogue::Relu, {300, 7}, true, true},
                      LinearCase{kFloat32, ops::Epilogue::None, {4, 0}, true, false},
                      LinearCase{kFloat64, ops::Epilogue::Relu, {5, 7}, true, false},
                      LinearCase{kFloat64, ops::Epilogue::Gelu, {6, 7}, false, false},
                      LinearCase{kBFloat16, ops::Epilogue::Relu, {5, 7}, true, false},
                      LinearCase{kBFloat16, ops::Epilogue::None, {5, 7}, false, true},
                      LinearCase{kFloat16, ops::Epilogue::Relu, {5, 7}, true, false}),
    [](const ::testing::TestParamInfo<LinearCase>& info) { return "case" + std::to_string(info.index); });

TEST(FusedLinearForward, GeluFoldsIntoTheProductWithoutGrad) {
  manual_seed(3);
  const Tensor x = randn({9, 5}), w = randn({6, 5}), b = randn({6});
  Tensor fused;
  {
    NoGradGuard no_grad;
    fused = nn::linear_with_activation(x, w, b, ops::Epilogue::Gelu);
  }
  const Tensor ref = gelu(add(matmul(x.to(kFloat64), w.to(kFloat64).t()), b.to(kFloat64)));
  expect_close(fused, values(ref), 1e-5, 1e-5);
}

TEST(FusedLinearForward, SequentialFoldsALinearAndTheReluAfterIt) {
  manual_seed(5);
  nn::Sequential seq(nn::Linear(6, 5), nn::ReLU(), nn::Linear(5, 3));
  const Tensor x = randn({4, 6});
  const Tensor y = seq(x);
  // The first Linear and the ReLU became one op; the second Linear has nothing to fold.
  const auto* first = static_cast<const autograd::Node*>(y.impl()->grad_fn().get());
  EXPECT_EQ(grad_fn_name(y), "AddmmBackward0");
  ASSERT_EQ(first->next_functions().size(), 3u);
  ASSERT_TRUE(first->next_functions()[0].is_valid());
  EXPECT_EQ(first->next_functions()[0].function->name(), "AddmmBackward0");  // Linear+ReLU, not ReLU's own node
  // The same values as each module in turn.
  const auto lin1 = std::dynamic_pointer_cast<nn::LinearImpl>((*seq)[0]);
  const auto lin2 = std::dynamic_pointer_cast<nn::LinearImpl>((*seq)[2]);
  ASSERT_TRUE(lin1 && lin2);
  const Tensor step = lin2->forward(relu(lin1->forward(x)));
  expect_close(y, values(step), 1e-6, 1e-6);
}

struct OptimizerCase {
  const char* name;
  DType dtype;
  bool master_weights;
  std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>, bool)> make;
};

void PrintTo(const OptimizerCase& c, std::ostream* os) { *os << c.name; }

class FusedOptimizer : public ::testing::TestWithParam<OptimizerCase> {};

// Five steps over tensors of 30,000 (split between threads), 7 and 1 elements, with a gradient
// that changes every step; parameters and every state tensor compared.
TEST_P(FusedOptimizer, MatchesTheComposedFormAndFloat64) {
  const OptimizerCase c = GetParam();
  ComposedOnSim composed;
  manual_seed(11);
  const std::vector<Shape> shapes{{300, 100}, {7}, {1}};
  std::vector<Tensor> init, grads;
  for (const Shape& s : shapes) init.push_back(randn(s, kFloat64));
  for (int step = 0; step < 5; ++step)
    for (const Shape& s : shapes) grads.push_back(randn(s, kFloat64));
  auto run = [&](DType dtype, Device device, bool master) {
    std::vector<Tensor> params;
    for (const Tensor& t : init) params.push_back(leaf(t, dtype, device));
    auto opt = c.make(params, master);
    for (int step = 0; step < 5; ++step) {
      for (size_t i = 0; i < params.size(); ++i) params[i].set_grad(grads[step * shapes.size() + i].to(dtype).to(device));
      opt->step();
    }
    std::vector<std::vector<double>> out;
    for (const Tensor& p : params) out.push_back(values(p));
    for (const auto& [key, t] : opt->state_dict()) out.push_back(values(t));
    return out;
  };
  const auto same = run(c.dtype, kComposed, c.master_weights);
  const auto ref = run(kFloat64, kComposed, false);
  const auto tolerances = tolerance(c.dtype);
  const double rtol = tolerances.first, atol = tolerances.second;  // clang 14: a lambda cannot capture a structured binding
  // The CPU's kernel, and CUDA's multi-tensor kernel where there is a GPU.
  std::vector<Device> devices{kCPU};
  if (cuda::is_available()) devices.push_back(Device("cuda:0"));
  for (const Device device : devices) {
    SCOPED_TRACE(device.str());
    const auto fused = run(c.dtype, device, c.master_weights);
    ASSERT_EQ(fused.size(), same.size());
    for (size_t t = 0; t < fused.size(); ++t) {
      ASSERT_EQ(fused[t].size(), same[t].size());
      for (size_t i = 0; i < fused[t].size(); ++i) {
        // Against the composed form in the same dtype: the same operations in the same order, at
        // most a rounding apart where a compiler fused a multiply-add (one bfloat16 step: 2^-8).
        const double same_tol = c.dtype == kBFloat16 ? 8e-3 : 1e-6;
        EXPECT_NEAR(fused[t][i], same[t][i], 1e-6 + same_tol * std::abs(same[t][i])) << "tensor " << t << " at " << i;
        if (t < shapes.size())  // parameters against float64
          EXPECT_NEAR(fused[t][i], ref[t][i], atol + rtol * std::abs(ref[t][i])) << "param " << t << " at " << i;
      }
    }
  }
}

std::unique_ptr<optim::Optimizer> sgd(std::vector<Tensor> p, optim::SGDOptions o) {
  return std::make_unique<optim::SGD>(std::move(p), o);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FusedOptimizer,
    ::testing::Values(
        OptimizerCase{"sgd", kFloat32, false, [](auto p, bool m) { return sgd(p, optim::SGDOptions(0.1).master_weights(m)); }},
        OptimizerCase{"sgd_momentum_dampening_decay", kFloat32, false,
                      [](auto p, bool m) { return sgd(p, optim::SGDOptions(0.05).momentum(0.9).dampening(0.1).weight_decay(0.01)); }},
        OptimizerCase{"sgd_nesterov", kFloat32, false,
                      [](auto p, bool m) { return sgd(p, optim::SGDOptions(0.05).momentum(0.8).nesterov(true).weight_decay(0.1)); }},
        OptimizerCase{"sgd_nesterov_f64", kFloat64, false,
                      [](auto p, bool m) { return sgd(p, optim::SGDOptions(0.05).momentum(0.8).nesterov(true)); }},
        OptimizerCase{"adam", kFloat32, false,
                      [](auto p, bool m) { return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2)); }},
        OptimizerCase{"adam_decay", kFloat32, false,
                      [](auto p, bool m) { return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2).weight_decay(0.1).betas(0.8, 0.9)); }},
        OptimizerCase{"adamw", kFloat32, false,
                      [](auto p, bool m) { return std::make_unique<optim::AdamW>(p, optim::AdamOptions(1e-2).weight_decay(0.1)); }},
        OptimizerCase{"adamw_f64", kFloat64, false, [](auto p, bool m) { return std::make_unique<optim::AdamW>(p, 1e-2); }},
        OptimizerCase{"sgd_momentum_bf16_master", kBFloat16, true,
                      [](auto p, bool m) { return sgd(p, optim::SGDOptions(0.05).momentum(0.9).master_weights(m)); }},
        OptimizerCase{"adam_bf16_master", kBFloat16, true,
                      [](auto p, bool m) { return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-2).master_weights(m)); }}),
    [](const ::testing::TestParamInfo<OptimizerCase>& info) { return std::string(info.param.name); });

// A parameter listed twice is updated twice, in order, as the composed form does.
TEST(FusedOptimizerList, AParameterListedTwiceIsUpdatedTwice) {
  ComposedOnSim composed;
  for (const Device device : {Device(kCPU), kComposed}) {
    SCOPED_TRACE(device.str());
    Tensor p = full({40000}, 1.0).to(device).requires_grad_(true);
    optim::SGD opt({p, p}, optim::SGDOptions(0.5).momentum(0.5));
    p.set_grad(full({40000}, 2.0).to(device));
    opt.step();  // each listing: buffer = g, p -= 0.5 * g -> 1 - 1 - 1
    expect_close(p, std::vector<double>(40000, -1.0), 0, 0);
  }
}

struct CrossEntropyCase {
  const char* name;
  Shape logits;
  std::vector<int64_t> target;
  nn::ClassLossOptions options;
};

void PrintTo(const CrossEntropyCase& c, std::ostream* os) { *os << c.name; }

class FusedCrossEntropy : public ::testing::TestWithParam<CrossEntropyCase> {};

TEST_P(FusedCrossEntropy, MatchesTheComposedFormAndFloat64) {
  const CrossEntropyCase c = GetParam();
  ComposedOnSim composed;
  manual_seed(13);
  const Tensor xv = randn(c.logits, kFloat64) * 3;
  Shape target_shape;
  if (c.logits.size() > 1) {
    target_shape.push_back(c.logits[0]);
    for (size_t d = 2; d < c.logits.size(); ++d) target_shape.push_back(c.logits[d]);
  }
  const Tensor t = tensor(c.target).reshape(target_shape);
  auto run = [&](DType dtype, Device device) {
    const Tensor x = leaf(xv, dtype, device);
    const Tensor loss = nn::functional::cross_entropy(x, t.to(device), c.options);
    const Tensor g = c.options.reduction() == nn::Reduction::None ? full(loss.shape(), 0.5, kFloat64).to(dtype).to(device) : Tensor();
    if (g.defined()) loss.backward(g);
    else loss.backward();
    return std::make_pair(values(loss), values(x.grad()));
  };
  const auto fused = run(kFloat32, kCPU), same = run(kFloat32, kComposed), ref = run(kFloat64, kComposed);
  for (const auto* other : {&same, &ref}) {
    ASSERT_EQ(fused.first.size(), other->first.size());
    for (size_t i = 0; i < fused.first.size(); ++i) {
      if (std::isnan(other->first[i])) EXPECT_TRUE(std::isnan(fused.first[i]));
      else EXPECT_NEAR(fused.first[i], other->first[i], 1e-5 + 1e-5 * std::abs(other->first[i])) << "loss " << i;
    }
    for (size_t i = 0; i < fused.second.size(); ++i)
      EXPECT_NEAR(fused.second[i], other->second[i], 1e-6 + 1e-5 * std::abs(other->second[i])) << "grad " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FusedCrossEntropy,
    ::testing::Values(CrossEntropyCase{"mean", {6, 5}, {0, 4, 2, 2, 1, 3}, {}},
                      CrossEntropyCase{"sum", {6, 5}, {0, 4, 2, 2, 1, 3}, {nn::Reduction::Sum}},
                      CrossEntropyCase{"none", {6, 5}, {0, 4, 2, 2, 1, 3}, {nn::Reduction::None}},
                      CrossEntropyCase{"ignored_default", {4, 3}, {0, -100, 2, -100}, {}},
                      CrossEntropyCase{"ignored_class", {4, 3}, {0, 1, 2, 1}, {nn::Reduction::Mean, 1}},
                      CrossEntropyCase{"all_ignored", {3, 3}, {-100, -100, -100}, {}},
                      CrossEntropyCase{"unbatched", {5}, {3}, {}},
                      CrossEntropyCase{"spatial", {2, 3, 2, 2}, {0, 1, 2, 0, 1, 1, 2, 0}, {nn::Reduction::None}},
                      CrossEntropyCase{"spatial_mean", {2, 3, 2, 2}, {0, 1, 2, 0, 1, 1, 2, -100}, {}},
                      CrossEntropyCase{"many_rows", {4096, 10}, std::vector<int64_t>(4096, 7), {}}),
    [](const ::testing::TestParamInfo<CrossEntropyCase>& info) { return std::string(info.param.name); });

TEST(FusedCrossEntropyErrors, ABadTargetRaisesTheComposedFormsErrorAndChangesNothing) {
  ComposedOnSim composed;
  const Tensor x = randn({3, 4}).requires_grad_(true);
  const Tensor t = tensor({1L, 4L, -1L});
  std::string fused_message, composed_message;
  try {
    nn::functional::cross_entropy(x, t);
  } catch (const IndexError& e) {
    fused_message = e.what();
  }
  try {
    nn::functional::cross_entropy(x.detach().to(kComposed), t.to(kComposed));
  } catch (const IndexError& e) {
    composed_message = e.what();
  }
  EXPECT_EQ(fused_message, "[locus::cross_entropy] target 4 is out of bounds for 4 classes");
  EXPECT_EQ(fused_message, composed_message);
  EXPECT_FALSE(x.grad().defined());
}

}  // namespace
}  // namespace locus
