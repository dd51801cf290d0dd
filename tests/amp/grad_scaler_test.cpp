// GradScaler: skipped steps and backoff on overflow, growth, inf/NaN in one parameter of many,
// several optimizers, clipping after unscale_, state round trip, misuse errors.

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

class GradScalerTest : public testing::OnEachDevice {
 protected:
  // A small regression whose gradients are known: loss = sum(w * x) gives grad w = x.
  Tensor param(std::vector<double> v) { return tensor(v).to(dev(), kFloat32).requires_grad_(); }
};

TEST_P(GradScalerTest, ScaledGradientsAreUnscaledBeforeTheStep) {
  const Tensor w = param({1, 2, 3});
  optim::SGD opt({w}, 0.5);
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(1024));
  const Tensor loss = (w * tensor({0.25, -1.0, 2.0}).to(dev())).sum();
  const Tensor scaled = scaler.scale(loss);
  expect_close(scaled, {1024 * values(loss)[0]});
  scaled.backward();
  expect_close(w.grad(), {256, -1024, 2048});
  EXPECT_TRUE(scaler.step(opt));
  expect_close(w, {1 - 0.125, 2 + 0.5, 3 - 1});
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 1024);
  EXPECT_EQ(scaler.growth_tracker(), 1);
}

TEST_P(GradScalerTest, AnOverflowSkipsTheStepAndBacksTheScaleOff) {
  const testing::MemoryBaseline baseline(dev());
  {
    const Tensor w = param({1, 2});
    optim::SGD opt({w}, 0.1);
    amp::GradScaler scaler(amp::GradScalerOptions().init_scale(1e38));
    // Scaled into overflow: 1e38 * 1e2 is inf in float32.
    scaler.scale((w * 100.0).sum()).backward();
    EXPECT_FALSE(scaler.step(opt));
    expect_close(w, {1, 2});
    scaler.update();
    EXPECT_DOUBLE_EQ(scaler.get_scale(), 0.5e38);
    EXPECT_EQ(scaler.growth_tracker(), 0);
  }
}

TEST_P(GradScalerTest, TheScaleGrowsAfterTheInterval) {
  const Tensor w = param({1});
  optim::SGD opt({w}, 0.1);
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(8).growth_interval(3).growth_factor(4));
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    scaler.scale(w.sum()).backward();
    scaler.step(opt);
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), i < 2 ? 8 : 32) << "after step " << i + 1;
  }
  EXPECT_EQ(scaler.growth_tracker(), 0);
  scaler.update(2.0);
  EXPECT_EQ(scaler.get_scale(), 2);
}

TEST_P(GradScalerTest, InfOrNanInOneParameterOfManySkipsTheStep) {
  for (const double bad : {INFINITY, NAN}) {
    std::vector<Tensor> ps;
    for (int i = 0; i < 7; ++i) ps.push_back(full({100 + i}, 1.0, dev()).requires_grad_());
    optim::Adam opt(ps, 0.1);
    amp::GradScaler scaler(amp::GradScalerOptions().init_scale(4));
    Tensor loss = zeros({}, dev());
    for (const Tensor& p : ps) loss = loss + p.sum();
    scaler.scale(loss).backward();
    {
      NoGradGuard no_grad;
      ps[4].grad()[37].fill_(bad);
    }
    scaler.unscale_(opt);
    expect_close(ps[0].grad(), std::vector<double>(100, 1.0));  // every gradient unscaled all the same
    EXPECT_FALSE(scaler.step(opt));
    for (const Tensor& p : ps) expect_close(p, std::vector<double>(static_cast<size_t>(p.numel()), 1.0));
    scaler.update();
    EXPECT_EQ(scaler.get_scale(), 2);
  }
}

// Clipping sees the true gradients after unscale_; the step uses the clipped ones.
TEST_P(GradScalerTest, ClippingAfterUnscale) {
  const Tensor w = param({0, 0});
  optim::SGD opt({w}, 1.0);
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(256));
  scaler.scale((w * tensor({3.0, 4.0}).to(dev())).sum()).backward();
  scaler.unscale_(opt);
  const Tensor norm = nn::utils::clip_grad_norm_({w}, 1.0);
  expect_close(norm, {5});
  expect_close(w.grad(), {0.6, 0.8}, 1e-5);
  EXPECT_TRUE(scaler.step(opt));
  expect_close(w, {-0.6, -0.8}, 1e-5);
  scaler.update();
}

// Two optimizers share a scaler: the one with an inf skips, the other steps, the scale backs off.
TEST_P(GradScalerTest, SeveralOptimizers) {
  const Tensor a = param({1}), b = param({1});
  optim::SGD opt_a({a}, 0.5);
  optim::AdamW opt_b({b}, 0.5);
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(2));
  scaler.scale(a.sum() + (b * INFINITY).sum()).backward();
  EXPECT_TRUE(scaler.step(opt_a));
  EXPECT_FALSE(scaler.step(opt_b));
  expect_close(a, {0.5});
  expect_close(b, {1});
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 1);
}

// A power-of-two scale is exact: Adam with the scaler equals Adam without it.
TEST_P(GradScalerTest, AdamWithTheScalerMatchesAdamWithout) {
  const Tensor x = randn({16, 4}, dev()), y = randn({16, 1}, dev());
  const Tensor w0 = randn({1, 4}, dev());
  Tensor w1 = w0.clone().requires_grad_(), w2 = w0.clone().requires_grad_();
  optim::Adam plain({w1}, 0.01), scaled({w2}, 0.01);
  amp::GradScaler scaler;
  for (int i = 0; i < 5; ++i) {
    plain.zero_grad(), scaled.zero_grad();
    locus::mse_loss(locus::linear(x, w1), y).backward();
    plain.step();
    scaler.scale(locus::mse_loss(locus::linear(x, w2), y)).backward();
    scaler.step(scaled);
    scaler.update();
  }
  expect_close(w2, values(w1), 1e-6, 1e-7);
}

TEST_P(GradScalerTest, StateRoundTrip) {
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(64).growth_interval(10).backoff_factor(0.25));
  const Tensor w = param({1});
  optim::SGD opt({w}, 0.1);
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    scaler.scale(w.sum()).backward();
    scaler.step(opt);
    scaler.update();
  }
  const auto state = scaler.state_dict();
  EXPECT_EQ(state.at("scale").item<double>(), 64);
  EXPECT_EQ(state.at("_growth_tracker").item<int64_t>(), 3);
  EXPECT_EQ(state.at("backoff_factor").item<double>(), 0.25);
  amp::GradScaler restored;
  restored.load_state_dict(state);
  EXPECT_EQ(restored.get_scale(), 64);
  EXPECT_EQ(restored.growth_tracker(), 3);
  EXPECT_EQ(restored.options().growth_interval(), 10);
  EXPECT_EQ(restored.options().backoff_factor(), 0.25);
  EXPECT_EQ(restored.state_dict().at("scale").item<double>(), 64);
  // Through a safetensors file as well.
  const std::string path = ::testing::TempDir() + "/scaler_" + std::to_string(::getpid()) + ".safetensors";
  save(state, path);
  amp::GradScaler from_file;
  from_file.load_state_dict(load(path));
  EXPECT_EQ(from_file.get_scale(), 64);
  EXPECT_EQ(from_file.growth_tracker(), 3);
}

// More tensors than one CUDA launch takes (48), a tensor longer than one launch's blocks
// (320 x 65536 elements), several dtypes, and the inf in the very last element.
TEST_P(GradScalerTest, ManyAndLargeGradientsAreAllUnscaledAndChecked) {
  std::vector<Tensor> params;
  for (int i = 0; i < 60; ++i) {
    const DType dtype = i % 3 == 0 ? kFloat32 : i % 3 == 1 ? kBFloat16 : kFloat64;
    params.push_back(zeros({10 + i}, TensorOptions().dtype(dtype).device(dev())).requires_grad_());
  }
  const int64_t big = int64_t{320} * 65536 + 5;
  params.push_back(zeros({big}, dev()).requires_grad_());
  for (const Tensor& p : params) p.set_grad(full(p.shape(), 8.0, TensorOptions().dtype(p.dtype()).device(dev())));
  optim::SGD opt(params, 0.1);
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(4));
  scaler.unscale_(opt);
  for (size_t i = 0; i < params.size(); i += 7) expect_close(params[i].grad().narrow(0, 0, 5), {2, 2, 2, 2, 2});
  expect_close(params.back().grad().narrow(0, big - 3, 3), {2, 2, 2});
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
  {
    NoGradGuard no_grad;
    params.back().grad().fill_(8.0);
    params.back().grad()[big - 1].fill_(INFINITY);
  }
  scaler.unscale_(opt);
  EXPECT_FALSE(scaler.step(opt));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 2);
}

// Tied weights: one gradient listed twice is unscaled once.
TEST_P(GradScalerTest, ASharedGradientIsUnscaledOnce) {
  const Tensor w = param({1, 1});
  optim::SGD opt({w, w}, 0.5);
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(4));
  scaler.scale(w.sum() * 2.0).backward();
  scaler.unscale_(opt);
  expect_close(w.grad(), {2, 2});
}

INSTANTIATE_TEST_SUITE_P(Devices, GradScalerTest, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

TEST(GradScalerErrors, MisuseIsNamed) {
  const Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 0.1);
  amp::GradScaler scaler;
  const auto expect_error = [](auto&& f, const std::string& message) { testing::expect_error<ValueError>(f, message); };
  expect_error([&] { scaler.update(); },
               "[locus::amp] GradScaler::update(): no inf checks were recorded since the last update(); call "
               "step(optimizer) (or unscale_(optimizer)) first");
  scaler.scale(w.sum()).backward();
  scaler.unscale_(opt);
  expect_error([&] { scaler.unscale_(opt); },
               "[locus::amp] GradScaler::unscale_() has already been called on this optimizer since the last update()");
  scaler.step(opt);
  expect_error([&] { scaler.step(opt); },
               "[locus::amp] GradScaler::step() has already been called on this optimizer since the last update()");
  expect_error([&] { scaler.unscale_(opt); }, "[locus::amp] GradScaler::unscale_() is being called after step()");
  scaler.update();
  expect_error([&] { scaler.load_state_dict({}); },
               "[locus::amp] GradScaler::load_state_dict: the state is empty, possibly because it was saved from a "
               "disabled GradScaler");
  expect_error([&] { scaler.load_state_dict({{"scale", tensor(2.0)}}); },
               "[locus::amp] GradScaler::load_state_dict: the state has no 'growth_factor'");
  expect_error([&] { amp::GradScaler(amp::GradScalerOptions().growth_factor(0.5)); },
               "[locus::amp] GradScaler::GradScaler: growth_factor must be greater than 1, got 0.500000");
  EXPECT_EQ(scaler.get_scale(), 65536);  // nothing above changed it

  const Tensor h = tensor({1.0}).to(kFloat16).requires_grad_();
  optim::SGD half_opt({h}, 0.1);
  scaler.scale(h.sum()).backward();
  EXPECT_THROW(scaler.unscale_(half_opt), ValueError);
  EXPECT_THROW(scaler.step(half_opt), ValueError);
  // The refused calls recorded nothing: update() still has no inf check to go on.
  EXPECT_THROW(scaler.update(), ValueError);
  EXPECT_EQ(scaler.get_scale(), 65536);
}

TEST(GradScalerErrors, DisabledIsAPassThrough) {
  const Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 0.5);
  amp::GradScaler scaler(amp::GradScalerOptions().enabled(false));
  const Tensor loss = (w * 2.0).sum();
  EXPECT_TRUE(scaler.scale(loss).is_same(loss));
  loss.backward();
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
  testing::expect_close(w, {0});
  EXPECT_EQ(scaler.get_scale(), 1.0);
  EXPECT_TRUE(scaler.state_dict().empty());
}

}  // namespace
}  // namespace locus
