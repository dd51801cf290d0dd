// Whole-model low precision: a bfloat16 model trains, float32 master weights keep the updates
// that bfloat16 rounds away; gradient clipping against float64.

#include <gtest/gtest.h>

#include <cmath>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

class LowPrecision : public testing::OnEachDevice {};

TEST_P(LowPrecision, ABFloat16ModelTrains) {
  manual_seed(3);
  nn::Sequential model(nn::Linear(4, 16), nn::ReLU(), nn::Linear(16, 1));
  model->to(dev());
  model->to(kBFloat16);
  const Tensor x = randn({64, 4}, dev()).to(kBFloat16);
  const Tensor y = (x.to(kFloat32).sum(1, true) * 0.5).to(kBFloat16);
  for (const bool masters : {false, true}) {
    optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2).master_weights(masters));
    double first = 0, last = 0;
    for (int i = 0; i < 60; ++i) {
      opt.zero_grad();
      const Tensor loss = locus::mse_loss(model->forward(x), y);
      (i == 0 ? first : last) = loss.item<double>();
      loss.backward();
      opt.step();
    }
    EXPECT_LT(last, first / 4) << "master weights " << masters;
    for (const Tensor& p : model->parameters()) EXPECT_EQ(p.dtype(), kBFloat16);
  }
}

// 1 - 100 * 1e-4 in steps of 1e-4: each step is below bfloat16's spacing near 1 (2^-8), so
// without master weights nothing moves; with them the float32 copy moves and the parameter follows.
TEST_P(LowPrecision, MasterWeightsKeepSmallUpdates) {
  for (const bool masters : {false, true}) {
    const Tensor w = ones({3}, TensorOptions().dtype(kBFloat16).device(dev())).requires_grad_();
    optim::SGD opt({w}, optim::SGDOptions(1e-4).momentum(0.5).master_weights(masters));
    EXPECT_EQ(opt.master_weights(), masters);
    for (int i = 0; i < 100; ++i) {
      opt.zero_grad();
      (w.to(kFloat32).sum() * 0.5).backward();  // grad 0.5; with momentum 0.5 the step tends to 1e-4
      opt.step();
    }
    if (!masters) {
      expect_close(w, {1, 1, 1});
      EXPECT_EQ(opt.state_dict().count("0.master_weight"), 0u);
      continue;
    }
    // Float64 reference of the float32 master: buf = 0.5 buf + 0.5, w -= 1e-4 buf.
    double ref = 1, buf = 0;
    for (int i = 0; i < 100; ++i) buf = i == 0 ? 0.5 : 0.5 * buf + 0.5, ref -= 1e-4 * buf;
    const Tensor master = opt.state_dict().at("0.master_weight");
    EXPECT_EQ(master.dtype(), kFloat32);
    EXPECT_EQ(opt.state_dict().at("0.momentum_buffer").dtype(), kFloat32);
    expect_close(master, {ref, ref, ref}, 1e-6);
    expect_close(w, values(master.to(kBFloat16)), 0, 0);
    EXPECT_LT(values(w)[0], 1.0);
  }
}

TEST_P(LowPrecision, ClipGradNormMatchesFloat64) {
  const Tensor a = randn({5, 3}, dev()).requires_grad_(), b = randn({7}, dev()).requires_grad_();
  for (const double p : {2.0, 1.0, 3.0, double(INFINITY)}) {
    a.set_grad(randn({5, 3}, dev()) * 4.0);
    b.set_grad(randn({7}, dev()) * 4.0);
    std::vector<double> all = values(a.grad());
    const std::vector<double> bv = values(b.grad());
    all.insert(all.end(), bv.begin(), bv.end());
    double norm = 0;
    for (double v : all) norm = std::isinf(p) ? std::max(norm, std::abs(v)) : norm + std::pow(std::abs(v), p);
    if (!std::isinf(p)) norm = std::pow(norm, 1 / p);
    const std::vector<double> ga = values(a.grad());
    const Tensor total = nn::utils::clip_grad_norm_({a, b}, 2.0, p);
    expect_close(total, {norm}, 1e-5);
    const double coef = std::min(1.0, 2.0 / (norm + 1e-6));
    std::vector<double> want;
    for (double v : ga) want.push_back(v * coef);
    expect_close(a.grad(), want, 1e-5);
  }
  nn::utils::clip_grad_value_({a}, 0.1);
  for (double v : values(a.grad())) EXPECT_LE(std::abs(v), 0.1 + 1e-7);
  a.set_grad(full({5, 3}, NAN, dev()));
  EXPECT_THROW(nn::utils::clip_grad_norm_({a}, 1.0, 2.0, true), ValueError);
}

INSTANTIATE_TEST_SUITE_P(Devices, LowPrecision, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
