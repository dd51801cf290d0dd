// The CNN layers as modules: PyTorch's state_dict names and order, BatchNorm's buffers (running
// updates against a float64 reference, momentum=None, assignment copying into the registered
// buffer, to()), the forgotten-eval() warning, ConvTranspose2d's output_size, reprs, the
// general path's determinism across devices, and BatchNorm under DataParallel.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

namespace F = nn::functional;
using testing::values;

// The CNN of `locus train --model cnn`.
nn::Sequential small_cnn() {
  return nn::Sequential{nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4), nn::ReLU(),
                        nn::MaxPool2d(2),                                    nn::Flatten(),      nn::Linear(4 * 4 * 4, 3)};
}

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, t] : m.state_dict()) out.push_back(name);
  return out;
}

TEST(CnnLayers, StateDictNamesAndOrderAreTorchs) {
  const nn::Sequential m = small_cnn();
  // As torch.nn.Sequential(...).state_dict().keys() lists them.
  EXPECT_EQ(keys(*m), (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                                                "1.running_var", "1.num_batches_tracked", "5.weight", "5.bias"}));
  const Tensor count = m->state_dict()["1.num_batches_tracked"];
  EXPECT_EQ(count.dtype(), kInt64);
  EXPECT_EQ(count.dim(), 0);
  EXPECT_EQ(m->named_parameters().size(), 6u);  // buffers are not parameters
}

TEST(CnnLayers, BatchNormUpdatesRunningStatisticsAsPyTorch) {
  manual_seed(3);
  nn::BatchNorm1d bn(nn::BatchNormOptions(2).momentum(0.25));
  const Tensor x = randn({5, 2}, TensorOptions().dtype(kFloat64));
  bn->to(kFloat64);
  const Tensor y = bn(x);
  const std::vector<double> xs = values(x);
  for (int c = 0; c < 2; ++c) {
    double mean = 0, ss = 0;
    for (int i = 0; i < 5; ++i) mean += xs[static_cast<size_t>(2 * i + c)] / 5;
    for (int i = 0; i < 5; ++i) ss += std::pow(xs[static_cast<size_t>(2 * i + c)] - mean, 2);
    // Normalised with the biased variance; the running variance takes the unbiased one.
    for (int i = 0; i < 5; ++i)
      EXPECT_NEAR(values(y)[static_cast<size_t>(2 * i + c)], (xs[static_cast<size_t>(2 * i + c)] - mean) / std::sqrt(ss / 5 + 1e-5), 1e-12);
    EXPECT_NEAR(values(bn->running_mean)[static_cast<size_t>(c)], 0.25 * mean, 1e-12);
    EXPECT_NEAR(values(bn->running_var)[static_cast<size_t>(c)], 0.75 + 0.25 * ss / 4, 1e-12);
  }
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  // eval(): the running statistics normalise, and nothing moves.
  bn->eval();
  const std::vector<double> rm = values(bn->running_mean), rv = values(bn->running_var);
  const Tensor z = bn(x);
  for (int i = 0; i < 5; ++i)
    for (int c = 0; c < 2; ++c)
      EXPECT_NEAR(values(z)[static_cast<size_t>(2 * i + c)],
                  (xs[static_cast<size_t>(2 * i + c)] - rm[static_cast<size_t>(c)]) / std::sqrt(rv[static_cast<size_t>(c)] + 1e-5), 1e-12);
  EXPECT_EQ(values(bn->running_mean), rm);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
}

TEST(CnnLayers, MomentumNoneIsTheCumulativeAverage) {
  nn::BatchNorm1d bn(nn::BatchNormOptions(1).momentum(std::nullopt).affine(false));
  const std::vector<double> batch_means = {1.0, 4.0, -2.0};
  for (double m : batch_means) bn(tensor({m - 1, m + 1}).view({2, 1}));
  EXPECT_NEAR(values(bn->running_mean)[0], 1.0, 1e-6);  // (1 + 4 - 2) / 3
  EXPECT_NEAR(values(bn->running_var)[0], 2.0, 1e-6);   // each batch's unbiased variance is 2
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 3);
}

TEST(CnnLayers, AssigningARunningStatisticCopiesIntoTheRegisteredBuffer) {
  nn::BatchNorm2d bn(3);
  const void* registered = bn->running_mean.data_ptr();
  bn->running_mean = full({3}, 2.5);
  EXPECT_EQ(bn->running_mean.data_ptr(), registered);
  EXPECT_EQ(values(bn->state_dict()["running_mean"]), (std::vector<double>{2.5, 2.5, 2.5}));
  bn->to(Device("sim:0"));  // the member still follows the module
  EXPECT_EQ(bn->running_mean.device(), Device("sim:0"));
  EXPECT_EQ(values(bn->running_mean), (std::vector<double>{2.5, 2.5, 2.5}));
  testing::expect_error<ShapeError>([&] { bn->running_var = ones({4}); },
                                    "BufferTensor: assigning a tensor of shape [4] to a buffer of shape [3] "
                                    "(assignment copies into the registered buffer)");
  nn::BatchNorm2d untracked(nn::BatchNormOptions(3).track_running_stats(false));
  EXPECT_EQ(keys(*untracked), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_THROW(untracked->running_mean = ones({3}), ValueError);
}

TEST(CnnLayers, ToConvertsFloatingBuffersAndKeepsTheCount) {
  nn::BatchNorm2d bn(2);
  bn->to(kFloat64);
  EXPECT_EQ(bn->running_var.dtype(), kFloat64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
}

// The bodies of the warning test's child processes.
void train_mode_layers_without_grad() {
  nn::BatchNorm2d bn(2);
  const Tensor x = randn({2, 2, 3, 3});
  NoGradGuard no_grad;
  bn(x);
  bn(x);
  nn::Dropout(0.5)(x);
  std::exit(0);
}

void eval_mode_layers_without_grad() {
  nn::Sequential m{nn::BatchNorm2d(2), nn::Dropout(0.5)};
  m->eval();
  NoGradGuard no_grad;
  m(randn({2, 2, 3, 3}));
  std::fprintf(stderr, "done");
  std::exit(0);
}

TEST(CnnLayers, TrainingModeWithGradientsOffWarnsOnce) {
  // In fresh child processes (the threadsafe style re-executes the binary): the warning is once
  // per process, so a child forked from a process that already warned would print nothing, and
  // forking a process with OpenMP workers is unsafe.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(train_mode_layers_without_grad(), ::testing::ExitedWithCode(0),
              "^Warning: BatchNorm2d runs in training mode with gradients off[^W]*$");
  EXPECT_EXIT(eval_mode_layers_without_grad(), ::testing::ExitedWithCode(0), "^done");
}

TEST(CnnLayers, ConvTransposeForwardWithOutputSize) {
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1));
  const Tensor x = randn({1, 4, 5, 5});
  EXPECT_EQ(up(x).shape(), (Shape{1, 2, 9, 9}));
  EXPECT_EQ(up->forward(x, {10, 10}).shape(), (Shape{1, 2, 10, 10}));
  EXPECT_EQ(up->forward(x, {1, 2, 10, 9}).shape(), (Shape{1, 2, 10, 9}));
  EXPECT_THROW(up->forward(x, {11, 10}), ValueError);
}

TEST(CnnLayers, ReprsArePyTorchs) {
  EXPECT_EQ(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1))->extra_repr(),
            "1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)");
  EXPECT_EQ(nn::Conv1d(nn::Conv1dOptions(1, 8, 3).stride(2).bias(false).padding_mode(kReflect))->extra_repr(),
            "1, 8, kernel_size=(3,), stride=(2,), bias=False, padding_mode=reflect");
  EXPECT_EQ(nn::Conv2d(nn::Conv2dOptions(3, 6, 3).padding(kSame).dilation(2).groups(3))->extra_repr(),
            "3, 6, kernel_size=(3, 3), stride=(1, 1), padding=same, dilation=(2, 2), groups=3");
  EXPECT_EQ(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(16, 8, 3).stride(2))->extra_repr(),
            "16, 8, kernel_size=(3, 3), stride=(2, 2)");
  EXPECT_EQ(nn::MaxPool2d(2)->extra_repr(), "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False");
  EXPECT_EQ(nn::AvgPool1d(2)->extra_repr(), "kernel_size=(2,), stride=(2,), padding=(0,)");
  EXPECT_EQ(nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions({2, 3}))->extra_repr(), "output_size=(2, 3)");
  EXPECT_EQ(nn::BatchNorm1d(nn::BatchNormOptions(4).momentum(std::nullopt))->extra_repr(),
            "4, eps=1e-05, momentum=None, affine=True, track_running_stats=True");
  EXPECT_EQ(nn::GroupNorm(8, 64)->extra_repr(), "8, 64, eps=1e-05, affine=True");
  EXPECT_EQ(nn::InstanceNorm2d(3)->extra_repr(), "3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False");
  EXPECT_EQ(nn::Dropout2d(0.3)->extra_repr(), "p=0.3, inplace=False");
  EXPECT_EQ(nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2}))->extra_repr(),
            "scale_factor=2.0, mode=nearest");
  EXPECT_EQ(nn::Upsample(nn::UpsampleOptions().size(std::vector<int64_t>{4, 5}).mode(kBilinear).align_corners(true))
                ->extra_repr(),
            "size=(4, 5), mode=bilinear");
}

TEST(CnnLayers, ConstructorsRefuseBadOptions) {
  testing::expect_error<ValueError>([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); },
                                    "Conv2d: in_channels must be divisible by groups");
  testing::expect_error<ValueError>([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(kSame).stride(2)); },
                                    "Conv2d: padding='same' is not supported for strided convolutions");
  testing::expect_error<ValueError>([] { nn::GroupNorm(4, 6); }, "GroupNorm: num_channels must be divisible by num_groups");
  testing::expect_error<ValueError>([] { nn::BatchNorm2d(3)(randn({2, 3, 4})); }, "BatchNorm2d: expected 4D input (got 3D input)");
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(3, 4, {3, 3, 3})), ValueError);  // three sizes for two dims
}

TEST(CnnLayers, ConvolutionNamesTheArgumentOnAnotherDevice) {
  const Tensor x = randn({1, 2, 5, 5});
  const Tensor w = randn({3, 2, 3, 3}, TensorOptions().device(Device("sim:0")));
  try {
    F::conv2d(x, w);
    ADD_FAILURE() << "no error";
  } catch (const DeviceMismatchError& e) {
    EXPECT_NE(std::string(e.what()).find("'weight'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("conv2d"), std::string::npos) << e.what();
  }
}

// col2im sums in one order on every device: fold (and so every convolution's input gradient)
// gives the same bits on cpu and sim, run after run.
TEST(CnnLayers, FoldIsDeterministicAcrossDevicesAndRuns) {
  manual_seed(11);
  const Tensor cols = randn({2, 3 * 9, 25});
  const auto o = F::FoldFuncOptions({5, 5}, {3, 3}).padding(1);
  const std::vector<double> first = values(F::fold(cols, o));
  EXPECT_EQ(values(F::fold(cols, o)), first);
  EXPECT_EQ(values(F::fold(cols.to(Device("sim:0")), o)), first);
}

// Three SGD steps of the small CNN, batch statistics included, are the same on cpu and sim.
// SGD rather than Adam: the conv bias before BatchNorm has a gradient of rounding noise only
// (the normalisation removes it), which Adam would scale up to whole steps of +-lr, and the
// noise follows the thread count oneDNN splits the weight gradient by.
TEST(CnnLayers, TrainingStepMatchesAcrossDevices) {
  std::vector<std::vector<double>> after;
  for (const char* d : {"cpu", "sim:0"}) {
    manual_seed(5);
    nn::Sequential m = small_cnn();
    m->to(Device(d));
    optim::SGD opt(m->parameters(), optim::SGDOptions(0.1));
    const Tensor x = randn({4, 1, 8, 8}).to(Device(d));
    const Tensor y = tensor(std::vector<int64_t>{0, 1, 2, 1}).to(Device(d));
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      nn::functional::cross_entropy(m(x), y).backward();
      opt.step();
    }
    std::vector<double> all;
    for (const auto& [name, t] : m->state_dict())
      for (double v : values(t)) all.push_back(v);
    after.push_back(all);
  }
  ASSERT_EQ(after[0].size(), after[1].size());
  for (size_t i = 0; i < after[0].size(); ++i) EXPECT_NEAR(after[0][i], after[1][i], 1e-5) << i;
}

// DataParallel's replicas carry the buffers; the replica on the module's own device updates
// the module's running statistics, as PyTorch's does.
TEST(CnnLayers, BatchNormTrainsUnderDataParallel) {
  manual_seed(2);
  nn::Sequential m = small_cnn();
  m->to(Device("sim:0"));
  nn::DataParallel parallel(m, {Device("sim:0"), Device("sim:1")});
  optim::SGD opt(m->parameters(), optim::SGDOptions(0.1));
  const Tensor x = randn({4, 1, 8, 8}).to(Device("sim:0"));
  const Tensor y = tensor(std::vector<int64_t>{0, 1, 2, 1}).to(Device("sim:0"));
  const std::vector<double> before = values(m->state_dict()["0.weight"]);
  nn::functional::cross_entropy(parallel(x), y).backward();
  opt.step();
  EXPECT_NE(values(m->state_dict()["0.weight"]), before);
  const std::vector<double> rm = values(m->state_dict()["1.running_mean"]);
  EXPECT_NE(rm, std::vector<double>(4, 0.0)) << "the running statistics did not move";
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// While alive, sim devices lack the named fused kernels ("convolution", "batch_norm"), so they
// take the general path while cpu takes its fused kernels.
class SimLacks {
 public:
  explicit SimLacks(std::vector<std::string> ops) : original_(sim::config()) {
    sim::Config c = original_;
    c.unsupported_ops = std::move(ops);
    sim::configure(c);
  }
  ~SimLacks() { sim::configure(original_); }
  SimLacks(const SimLacks&) = delete;
  SimLacks& operator=(const SimLacks&) = delete;

 private:
  sim::Config original_;
};

struct ConvCase {
  int64_t n, c_in, c_out, h, w, k, stride, pad, dilation, groups;
  bool bias;
};

// The fused kernels (oneDNN on cpu, cuDNN on cuda where a GPU is lent) and the general path
// (on sim) give the same values and gradients on the same float32 cases: odd sizes, strides,
// dilation, groups, depthwise, no bias.
TEST(CnnLayers, FusedAndGeneralConvolutionAgree) {
  const SimLacks general({"convolution"});
  std::vector<std::string> devices{"sim:0", "cpu"};
  if (cuda::is_available()) devices.push_back("cuda:0");
  manual_seed(21);
  for (const ConvCase& c : {ConvCase{2, 3, 8, 9, 7, 3, 1, 1, 1, 1, true}, ConvCase{3, 16, 32, 14, 14, 3, 2, 1, 1, 1, true},
                            ConvCase{2, 8, 8, 11, 13, 3, 1, 2, 2, 1, false}, ConvCase{2, 8, 16, 10, 10, 3, 1, 1, 1, 4, true},
                            ConvCase{4, 16, 16, 12, 12, 3, 1, 1, 1, 16, true}, ConvCase{1, 1, 32, 28, 28, 3, 1, 1, 1, 1, true},
                            ConvCase{2, 4, 6, 8, 8, 1, 1, 0, 1, 1, true}, ConvCase{2, 5, 7, 9, 9, 5, 3, 2, 1, 1, true}}) {
    const Tensor x = randn({c.n, c.c_in, c.h, c.w}), w = randn({c.c_out, c.c_in / c.groups, c.k, c.k});
    const Tensor b = c.bias ? randn({c.c_out}) : Tensor();
    const auto options = F::Conv2dFuncOptions().stride(c.stride).padding(c.pad).dilation(c.dilation).groups(c.groups);
    const Tensor gout = randn(F::conv2d(x, w, options).shape());
    std::vector<std::vector<std::vector<double>>> results;
    for (const std::string& d : devices) {
      const Tensor xd = x.to(Device(d)).detach().requires_grad_(), wd = w.to(Device(d)).detach().requires_grad_();
      const Tensor bd = c.bias ? b.to(Device(d)).detach().requires_grad_() : Tensor();
      const Tensor y = F::conv2d(xd, wd, F::Conv2dFuncOptions(options).bias(bd));
      y.backward(gout.to(Device(d)));
      results.push_back({values(y), values(xd.grad()), values(wd.grad())});
      if (c.bias) results.back().push_back(values(bd.grad()));
    }
    for (size_t k = 1; k < devices.size(); ++k)
      for (size_t r = 0; r < results[0].size(); ++r) {
        ASSERT_EQ(results[0][r].size(), results[k][r].size());
        for (size_t j = 0; j < results[0][r].size(); ++j)
          ASSERT_NEAR(results[k][r][j], results[0][r][j], 1e-4 * (1 + std::abs(results[0][r][j])))
              << devices[k] << " case c_in=" << c.c_in << " groups=" << c.groups << " result " << r << " element " << j;
      }
  }
}

// Training-mode batch norm's fused kernel (cpu, and cuda where a GPU is lent) and its
// composition of ops (sim) agree on values, every gradient and the running statistics: 1-d, 2-d
// and 3-d inputs, float32 and float64, with and without the affine parameters.
TEST(CnnLayers, FusedAndComposedBatchNormAgree) {
  const SimLacks composed({"batch_norm"});
  std::vector<std::string> devices{"sim:0", "cpu"};
  if (cuda::is_available()) devices.push_back("cuda:0");
  struct Case {
    Shape shape;
    DType dtype;
    bool affine;
  };
  manual_seed(4);
  for (const Case& c : {Case{{16, 6}, kFloat32, true}, Case{{4, 5, 7}, kFloat64, true}, Case{{3, 8, 9, 11}, kFloat32, true},
                        Case{{2, 3, 5, 5}, kFloat64, false}, Case{{8, 64, 14, 14}, kFloat32, true}}) {
    const Tensor x = randn(c.shape, TensorOptions().dtype(c.dtype)).mul(3).add(1.5);
    const Tensor gout = randn(c.shape, TensorOptions().dtype(c.dtype));
    std::vector<std::vector<std::vector<double>>> results;
    for (const std::string& d : devices) {
      const bool images = c.shape.size() == 4;
      nn::BatchNorm1d bn1(nn::BatchNormOptions(c.shape[1]).affine(c.affine));
      nn::BatchNorm2d bn2(nn::BatchNormOptions(c.shape[1]).affine(c.affine));
      nn::Module& bn = images ? static_cast<nn::Module&>(*bn2) : static_cast<nn::Module&>(*bn1);
      bn.to(Device(d), c.dtype);
      manual_seed(100);  // the same affine parameters on every device
      for (Tensor p : bn.parameters()) {
        NoGradGuard g;
        p.copy_(randn(p.shape(), TensorOptions().dtype(c.dtype)).to(Device(d)));
      }
      const Tensor xd = x.to(Device(d)).detach().requires_grad_();
      const Tensor y = images ? bn2(xd) : bn1(xd);
      y.backward(gout.to(Device(d)));
      std::vector<std::vector<double>> r{values(y), values(xd.grad())};
      for (const Tensor& p : bn.parameters()) r.push_back(values(p.grad()));
      for (const auto& [name, t] : bn.state_dict()) r.push_back(values(t));  // running statistics included
      results.push_back(r);
    }
    for (size_t k = 1; k < devices.size(); ++k) {
      ASSERT_EQ(results[0].size(), results[k].size());
      for (size_t r = 0; r < results[0].size(); ++r)
        for (size_t j = 0; j < results[0][r].size(); ++j)
          ASSERT_NEAR(results[k][r][j], results[0][r][j], 2e-4 * (1 + std::abs(results[0][r][j])))
              << devices[k] << " shape " << c.shape << " result " << r << " element " << j;
    }
  }
}

// Eval-mode batch norm is one Affine pass of the fused kernel with its own node
// (NativeBatchNormBackward0, as PyTorch's), or addcmul where the device lacks the kernel (sim
// here): values and the gradients of input, weight and bias agree, on a stepped (transposed)
// input too, and an infinite input element leaves its gradient finite (g scale, x unread).
TEST(CnnLayers, EvalBatchNormFusedAndComposedAgree) {
  const SimLacks composed({"batch_norm"});
  manual_seed(6);
  for (const DType dtype : {kFloat32, kFloat64}) {
    const Tensor x = randn({5, 6, 7, 4}, TensorOptions().dtype(dtype)).mul(2).add(0.5);
    const Tensor gout = randn({5, 6, 7, 4}, TensorOptions().dtype(dtype));
    std::vector<std::vector<std::vector<double>>> results;
    for (const std::string d : {"sim:0", "cpu"}) {
      nn::BatchNorm2d bn(6);
      bn->to(Device(d), dtype);
      {
        NoGradGuard g;
        manual_seed(50);
        bn->weight.copy_(randn({6}, TensorOptions().dtype(dtype)).to(Device(d)));
        bn->bias.copy_(randn({6}, TensorOptions().dtype(dtype)).to(Device(d)));
        bn->running_mean.copy_(randn({6}, TensorOptions().dtype(dtype)).to(Device(d)));
        bn->running_var.copy_(rand({6}, TensorOptions().dtype(dtype)).add(0.5).to(Device(d)));
      }
      bn->eval();
      // A transposed view: the pass reads a contiguous copy, the gradient goes back to the view.
      const Tensor xd = x.transpose(2, 3).to(Device(d)).detach().requires_grad_();
      const Tensor y = bn(xd);
      EXPECT_EQ(y.grad_fn()->name(), d == "cpu" ? "NativeBatchNormBackward0" : "AddBackward0") << d;
      y.backward(gout.transpose(2, 3).to(Device(d)));
      results.push_back({values(y), values(xd.grad()), values(bn->weight.grad()), values(bn->bias.grad())});
    }
    for (size_t r = 0; r < results[0].size(); ++r)
      for (size_t j = 0; j < results[0][r].size(); ++j)
        ASSERT_NEAR(results[1][r][j], results[0][r][j], 1e-5 * (1 + std::abs(results[0][r][j])))
            << dtype << " result " << r << " element " << j;
  }
  nn::BatchNorm2d bn(2);
  bn->eval();
  const Tensor x = tensor({1.0f, std::numeric_limits<float>::infinity(), -2.0f, 3.0f}).view({1, 2, 2, 1}).requires_grad_();
  bn(x).sum().backward();
  for (double g : values(x.grad())) EXPECT_TRUE(std::isfinite(g)) << g;
}

// Max pooling without indices (max_pool2d under no_grad: the inference pass writes the values
// alone, eight 2x2 windows at a time with a masked tail on AVX2) gives the values that the
// pass with indices gives, and a window with a NaN is NaN: rows of 1 to 21 windows, odd widths
// with a column left over, float32 and float64, contiguous and transposed.
TEST(CnnLayers, MaxPoolValuesAloneMatchThePassWithIndices) {
  manual_seed(8);
  for (const DType dtype : {kFloat32, kFloat64})
    for (int64_t w = 2; w <= 43; w += 3)
      for (const bool transposed : {false, true}) {
        Tensor x = randn({2, 3, 6, w}, TensorOptions().dtype(dtype));
        {
          NoGradGuard g;
          x.view({-1}).index_put_({Tensor(tensor({int64_t{5}, int64_t{17}}))}, std::numeric_limits<double>::quiet_NaN());
        }
        if (transposed) x = x.transpose(0, 1);
        const auto options = F::MaxPool2dFuncOptions(2);
        Tensor alone;
        {
          NoGradGuard g;
          alone = F::max_pool2d(x, options);
        }
        const auto [with, indices] = F::max_pool2d_with_indices(x, options);
        ASSERT_EQ(alone.shape(), with.shape());
        const std::vector<double> a = values(alone), b = values(with);
        int nans = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          if (std::isnan(b[i])) {
            ++nans;
            EXPECT_TRUE(std::isnan(a[i])) << "w " << w << " element " << i;
          } else {
            EXPECT_EQ(a[i], b[i]) << "w " << w << " element " << i;
          }
        }
        EXPECT_EQ(nans, 2) << "w " << w;
      }
}

// cuDNN's convolution on cuda: the gradients are the same bits run after run (nondeterministic
// engines are left out, Note [cuDNN convolutions]), and bfloat16 and float16 agree with float32
// to their precision.
TEST(CnnLayers, CudaConvolutionIsDeterministicInEveryFloatType) {
  REQUIRE_CUDA();
  manual_seed(3);
  const Tensor x = randn({8, 32, 28, 28}), w = randn({64, 32, 3, 3}).mul(0.05), b = randn({64});
  const Tensor gout = randn({8, 64, 28, 28});
  const auto run = [&](DType dtype) {
    const Tensor xd = x.to(Device("cuda:0"), dtype).detach().requires_grad_();
    const Tensor wd = w.to(Device("cuda:0"), dtype).detach().requires_grad_();
    const Tensor bd = b.to(Device("cuda:0"), dtype).detach().requires_grad_();
    const Tensor y = F::conv2d(xd, wd, F::Conv2dFuncOptions().bias(bd).padding(1));
    y.backward(gout.to(Device("cuda:0"), dtype));
    return std::vector<std::vector<double>>{values(y.to(kFloat32)), values(xd.grad().to(kFloat32)),
                                            values(wd.grad().to(kFloat32)), values(bd.grad().to(kFloat32))};
  };
  const auto reference = run(kFloat32);
  EXPECT_EQ(run(kFloat32), reference);
  for (DType dtype : {kBFloat16, kFloat16}) {
    const auto first = run(dtype);
    EXPECT_EQ(run(dtype), first) << dtype;
    const double tolerance = dtype == kBFloat16 ? 3e-2 : 4e-3;
    for (size_t r = 0; r < reference.size(); ++r) {
      double scale = 0;
      for (double v : reference[r]) scale = std::max(scale, std::abs(v));
      for (size_t j = 0; j < reference[r].size(); ++j)
        ASSERT_NEAR(first[r][j], reference[r][j], tolerance * scale) << dtype << " result " << r << " element " << j;
    }
  }
}

}  // namespace
}  // namespace locus
