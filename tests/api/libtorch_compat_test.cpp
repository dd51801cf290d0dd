// LibTorch programs' spellings through the compatibility header <torch/torch.h>: torch::, at::
// and c10:: naming Locus, the top-level nn functions against nn::functional's, lone integers as
// sizes, LibTorch's OrderedDict items, modules whose forward takes its tensor by value inside
// containers and clones, nn::Functional, TORCH_CHECK, and torch::save / torch::load.

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cstdio>

#include "tests/expect_error.h"
#include "tests/test_files.h"

namespace {

using locus::testing::expect_error;
using locus::testing::temp_path;
namespace F = torch::nn::functional;

// As pytorch/examples write a module: forward takes its tensor by value, and is no override.
struct ScaleNetImpl : torch::nn::Module {
  ScaleNetImpl() : fc(register_module("fc", torch::nn::Linear(3, 2))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x) * 2; }
  torch::nn::Linear fc;
};
TORCH_MODULE(ScaleNet);

TEST(LibTorchCompat, NamespacesNameLocus) {
  static_assert(std::is_same_v<torch::Tensor, locus::Tensor>);
  static_assert(std::is_same_v<at::Tensor, locus::Tensor>);
  static_assert(std::is_same_v<c10::Device, locus::Device>);
  static_assert(std::is_same_v<c10::optional<int>, std::optional<int>>);
  static_assert(std::is_same_v<torch::nn::Linear, locus::nn::Linear>);
  EXPECT_EQ(torch::kF32, torch::kFloat32);
  EXPECT_EQ(torch::kLong, torch::kInt64);
  EXPECT_EQ(torch::Device(torch::kCPU), locus::Device("cpu"));
  EXPECT_EQ(c10::str("sample-", 3, ".pt"), "sample-3.pt");
}

TEST(LibTorchCompat, LoneIntegersAreSizes) {
  EXPECT_EQ(torch::randn(10).sizes(), torch::IntArrayRef({10}));
  EXPECT_EQ(torch::arange(16).view(16).sizes(), torch::IntArrayRef({16}));
  const int64_t n = 5;
  const torch::Tensor e = torch::empty(n, torch::Device(torch::kCPU)).uniform_(0.8, 1.0);
  EXPECT_EQ(e.sizes(), torch::IntArrayRef({5}));
  EXPECT_TRUE((e >= 0.8).all().item<bool>());
  EXPECT_EQ(torch::zeros(3, torch::dtype(torch::kF64).requires_grad(true)).dtype(), torch::kFloat64);
  EXPECT_TRUE(torch::ones(2, torch::requires_grad()).requires_grad());
}

TEST(LibTorchCompat, TopLevelFunctionsAreTheFunctionalOnes) {
  torch::manual_seed(0);
  const torch::Tensor x = torch::randn({2, 3, 6, 6});
  EXPECT_TRUE(torch::equal(torch::max_pool2d(x, 2), F::max_pool2d(x, F::MaxPool2dFuncOptions(2))));
  EXPECT_TRUE(torch::equal(torch::max_pool2d(x, {3, 2}, {1, 2}, 1),
                           F::max_pool2d(x, F::MaxPool2dFuncOptions({3, 2}).stride({1, 2}).padding(1))));
  EXPECT_TRUE(torch::equal(torch::avg_pool2d(x, 3, 3), F::avg_pool2d(x, F::AvgPool2dFuncOptions(3))));
  EXPECT_TRUE(torch::equal(torch::adaptive_avg_pool2d(x, 1), x.mean({2, 3}, true)));
  const torch::Tensor w = torch::randn({4, 3, 3, 3}), b = torch::randn({4});
  EXPECT_TRUE(torch::equal(torch::conv2d(x, w, b, 2, 1), F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1))));
  EXPECT_TRUE(torch::dropout(x, 0.5, /*train=*/false).is_same(x));
  const torch::Tensor table = torch::randn({5, 2});
  EXPECT_TRUE(torch::equal(torch::embedding(table, torch::tensor({4L, 0L})), table.index_select(0, torch::tensor({4L, 0L}))));
  expect_error<torch::ValueError>([&] { torch::max_pool2d(x, {2, 2, 2}); },
                                  "max_pool2d: kernel_size must be one number or 2 (one per spatial dim), got 3");
}

TEST(LibTorchCompat, LossesWithAtenArguments) {
  const torch::Tensor log_probs = torch::log_softmax(torch::tensor({{1.0f, 2.0f, 0.5f}, {0.1f, 0.2f, 3.0f}}), 1);
  const torch::Tensor target = torch::tensor({1L, 2L});
  const float picked = -(log_probs[0][1].item<float>() + log_probs[1][2].item<float>());
  EXPECT_FLOAT_EQ(torch::nll_loss(log_probs, target, /*weight=*/{}, torch::Reduction::Sum).item<float>(), picked);
  EXPECT_FLOAT_EQ(torch::nll_loss(log_probs, target).item<float>(), picked / 2);
  const torch::Tensor weight = torch::tensor({1.0f, 2.0f, 0.5f});
  // A weighted mean divides by the weights of the targets: (2 a + 0.5 b) / 2.5.
  EXPECT_FLOAT_EQ(torch::nll_loss(log_probs, target, weight).item<float>(),
                  -(2 * log_probs[0][1].item<float>() + 0.5f * log_probs[1][2].item<float>()) / 2.5f);
  const torch::Tensor p = torch::tensor({0.25f, 0.5f}), t = torch::tensor({0.0f, 1.0f});
  EXPECT_FLOAT_EQ(torch::binary_cross_entropy(p, t).item<float>(), -(std::log(0.75f) + std::log(0.5f)) / 2);
  const torch::Tensor a = torch::tensor({0.0f, 3.0f}), c = torch::tensor({0.5f, 0.0f});
  EXPECT_FLOAT_EQ(torch::smooth_l1_loss(a, c).item<float>(), (0.125f + 2.5f) / 2);
  EXPECT_FLOAT_EQ(torch::l1_loss(a, c, torch::kSum).item<float>(), 3.5f);
  EXPECT_FLOAT_EQ(torch::mse_loss(a, c, torch::Reduction::Mean).item<float>(), (0.25f + 9.0f) / 2);
  EXPECT_TRUE(torch::equal(torch::cross_entropy_loss(torch::zeros({2, 4}), target.clamp(0, 3), {}, torch::kNone),
                           torch::full({2}, std::log(4.0f))));
}

TEST(LibTorchCompat, OrderedDictItemsHaveKeyAndValue) {
  torch::nn::Sequential model(torch::nn::Linear(3, 4), torch::nn::ReLU(), torch::nn::Linear(4, 1));
  const auto params = model->named_parameters();
  std::vector<std::string> keys;
  for (const auto& item : params) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(params[2].key(), "2.weight");
  EXPECT_TRUE(params[2].value().is_same(params["2.weight"]));
  expect_error<torch::IndexError>([&] { (void)params[4]; }, "OrderedDict: index 4 is out of range for 4 items");
  for (const auto& [name, tensor] : model->named_parameters()) EXPECT_TRUE(tensor.requires_grad()) << name;
  EXPECT_TRUE(model->named_parameters(/*recurse=*/false).empty());
  auto bn = torch::nn::BatchNorm1d(torch::nn::BatchNorm1dOptions(3));
  EXPECT_EQ(bn->named_buffers().keys(), (std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(bn->buffers().size(), 3u);
}

TEST(LibTorchCompat, ByValueForwardRunsInContainersAndClones) {
  torch::manual_seed(0);
  ScaleNet net;
  const torch::Tensor x = torch::randn({4, 3});
  const torch::Tensor want = net(x);
  EXPECT_TRUE(torch::allclose(want, (x.matmul(net->fc->weight.t()) + net->fc->bias) * 2));
  torch::nn::Sequential seq(net, torch::nn::Functional(torch::relu));
  EXPECT_TRUE(torch::equal(seq->forward(x), torch::relu(want)));
  // Through Module's virtual forward, and in a clone (what DataParallel runs on each device).
  std::shared_ptr<torch::nn::Module> as_module = net.ptr();
  EXPECT_TRUE(torch::equal(as_module->forward(x), want));
  const auto copy = seq->clone();
  EXPECT_TRUE(torch::equal(copy->forward(x), torch::relu(want)));
  torch::nn::ModuleList list{net};
  EXPECT_TRUE(torch::equal(list[0]->forward(x), want));
}

TEST(LibTorchCompat, FunctionalModuleBindsArguments) {
  const torch::Tensor x = torch::tensor({-1.0f, 2.0f});
  EXPECT_TRUE(torch::equal(torch::nn::Functional(torch::leaky_relu, 0.5)(x), torch::tensor({-0.5f, 2.0f})));
  EXPECT_TRUE(torch::equal(torch::nn::Functional([](torch::Tensor t) { return t * 3; })(x), torch::tensor({-3.0f, 6.0f})));
  EXPECT_EQ(torch::nn::Functional(torch::relu)->parameters().size(), 0u);
}

TEST(LibTorchCompat, ChecksThrowC10Errors) {
  expect_error<c10::Error>([] { TORCH_CHECK(1 + 1 == 3, "math is ", "broken: ", 2); }, "math is broken: 2");
  expect_error<c10::Error>([] { TORCH_CHECK(false); }, "Expected false to be true, but got false.");
  expect_error<c10::Error>([] { AT_ASSERT(!std::isnan(std::nan(""))); },
                           "Expected !std::isnan(std::nan(\"\")) to be true, but got false.");
  EXPECT_NO_THROW(TORCH_CHECK(true, "never printed"));
}

TEST(LibTorchCompat, OptimizerOptionsAsLibTorch) {
  auto fc = torch::nn::Linear(2, 2);
  torch::optim::Adam adam(fc->parameters(), torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.9)));
  auto& options = static_cast<torch::optim::AdamOptions&>(adam.param_groups()[0].options());
  EXPECT_EQ(options.betas(), std::make_tuple(0.5, 0.9));
  options.lr(0.1);
  EXPECT_DOUBLE_EQ(adam.param_groups()[0].options().get_lr(), 0.1);
  // LibTorch's AdamWOptions starts at AdamW's weight decay.
  EXPECT_DOUBLE_EQ(torch::optim::AdamWOptions(1e-3).weight_decay(), 0.01);
  EXPECT_DOUBLE_EQ(torch::optim::AdamWOptions(1e-3).weight_decay(0.05).weight_decay(), 0.05);
  torch::optim::AdamW adamw(fc->parameters(), torch::optim::AdamWOptions(1e-3));
  EXPECT_DOUBLE_EQ(static_cast<torch::optim::AdamOptions&>(adamw.defaults()).weight_decay(), 0.01);
}

TEST(LibTorchCompat, SaveAndLoadModulesOptimizersAndTensors) {
  torch::manual_seed(0);
  ScaleNet net;
  torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  net(torch::randn({2, 3})).sum().backward();
  sgd.step();
  const std::string model_path = temp_path("compat", "model.pt"), optim_path = temp_path("compat", "optim.pt");
  torch::save(net, model_path);
  torch::save(sgd, optim_path);
  // The module's file is its state_dict under PyTorch's names, readable as safetensors.
  EXPECT_EQ(torch::load(model_path).keys(), (std::vector<std::string>{"fc.weight", "fc.bias"}));

  ScaleNet other;
  torch::optim::SGD other_sgd(other->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  torch::load(other, model_path);
  torch::load(other_sgd, optim_path);
  EXPECT_TRUE(torch::equal(other->fc->weight, net->fc->weight));
  EXPECT_TRUE(other->fc->weight.requires_grad());
  // The same gradient step from the restored state lands on the same weights (momentum restored).
  for (auto* pair : {&net, &other}) {
    (*pair)->zero_grad();
    (*pair)(torch::ones({1, 3})).sum().backward();
  }
  sgd.step();
  other_sgd.step();
  EXPECT_TRUE(torch::equal(other->fc->weight, net->fc->weight));

  const std::string tensors_path = temp_path("compat", "tensors.pt");
  torch::save(std::vector<torch::Tensor>{torch::ones(2), torch::arange(3)}, tensors_path);
  std::vector<torch::Tensor> back;
  torch::load(back, tensors_path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(torch::equal(back[1], torch::arange(3)));

  torch::nn::Linear wrong(3, 3);
  EXPECT_THROW(torch::load(wrong, model_path), torch::ValueError);
  EXPECT_EQ(wrong->weight.sizes(), torch::IntArrayRef({3, 3}));
  for (const auto& path : {model_path, optim_path, tensors_path}) std::remove(path.c_str());
}

TEST(LibTorchCompat, ArchivesNestAndReadInPlace) {
  torch::serialize::OutputArchive inner, outer;
  inner.write("w", torch::ones({2, 2}));
  outer.write("step", torch::tensor(7L));
  outer.write("model", inner);
  const std::string path = temp_path("compat", "archive.pt");
  outer.save_to(path);

  torch::serialize::InputArchive in;
  in.load_from(path);
  EXPECT_EQ(in.keys(), (std::vector<std::string>{"step", "model"}));
  torch::Tensor step;
  in.read("step", step);
  EXPECT_EQ(step.item<int64_t>(), 7);
  torch::serialize::InputArchive model;
  ASSERT_TRUE(in.try_read("model", model));
  torch::Tensor w = torch::zeros({2, 2}, torch::requires_grad());
  model.read("w", w);  // copied into the existing tensor, which keeps requiring grad
  EXPECT_TRUE(torch::equal(w, torch::ones({2, 2})));
  EXPECT_TRUE(w.requires_grad());
  torch::Tensor small = torch::zeros({3});
  expect_error<torch::ShapeError>([&] { model.read("w", small); },
                                  "InputArchive: the tensor under 'model.w' has shape [2, 2], the tensor it is read into [3]");
  expect_error<torch::ValueError>([&] { in.read("epoch", step); },
                                  "InputArchive: no tensor under 'epoch'; the archive has 'step', 'model'");
  std::remove(path.c_str());
}

}  // namespace

namespace {

TEST(LibTorchCompat, AccessorsReadAndWriteThroughStrides) {
  torch::Tensor t = torch::arange(6, torch::kFloat).view({2, 3});
  auto a = t.accessor<float, 2>();
  EXPECT_EQ(a.size(0), 2);
  EXPECT_EQ(a[1][2], 5.0f);
  a[0][1] = 10;
  EXPECT_EQ(t[0][1].item<float>(), 10.0f);
  const torch::Tensor columns = t.t();  // strided: element (2, 1) is t's (1, 2)
  EXPECT_EQ((columns.accessor<float, 2>()[2][1]), 5.0f);
  expect_error<torch::DTypeError>([&] { t.accessor<double, 2>(); },
                                  "accessor: the tensor is float32, the accessor's type is float64");
  expect_error<torch::ShapeError>([&] { t.accessor<float, 3>(); }, "accessor: the tensor has 2 dims, the accessor 3");
}

TEST(LibTorchCompat, SmallTensorAndScalarNames) {
  torch::Tensor w = torch::ones(2);
  w.set_requires_grad(true);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_FALSE(w.data().requires_grad());
  EXPECT_EQ(w.data().data_ptr(), w.data_ptr());
  const torch::Tensor s = torch::tensor(2.5f);
  EXPECT_EQ(s.item().toFloat(), 2.5f);
  EXPECT_EQ(s.item().toDouble(), 2.5);
  EXPECT_EQ(s.item().toInt(), 2);
  EXPECT_EQ(torch::tensor(7L).item().toLong(), 7);
}

TEST(LibTorchCompat, AnyModuleCallsAnyOneTensorForward) {
  torch::manual_seed(0);
  ScaleNet net;
  torch::nn::AnyModule any(net);
  const torch::Tensor x = torch::randn({2, 3});
  EXPECT_TRUE(torch::equal(any.forward(x), net(x)));
  EXPECT_EQ(any.ptr<ScaleNetImpl>(), net.ptr());
  EXPECT_EQ(any.ptr<torch::nn::LinearImpl>(), nullptr);
}

}  // namespace
