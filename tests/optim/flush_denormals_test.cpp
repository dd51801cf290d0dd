// Note [Denormals]: optimizers flush denormal floats during their update, on every thread that
// runs it, and give the caller back its own floating-point mode; set_flush_denormal switches
// flushing for the calling thread and the kernels it launches.

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "src/core/float_mode.h"
#include "tests/test_util.h"

namespace locus {
namespace {

constexpr float kDenormal = 1e-39f;  // below float32's smallest normal, 1.18e-38

int64_t count_subnormal(const Tensor& t) {
  int64_t n = 0;
  for (float v : t.to(kCPU, kFloat32).to_vector<float>()) n += std::fpclassify(v) == FP_SUBNORMAL;
  return n;
}

// Restores IEEE behaviour however a test ends.
struct IeeeAfter {
  ~IeeeAfter() { set_flush_denormal(false); }
};

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& kind, std::vector<Tensor> params) {
  if (kind == "sgd") return std::make_unique<optim::SGD>(params, optim::SGDOptions(0.1).momentum(0.9));
  if (kind == "adam") return std::make_unique<optim::Adam>(params, optim::AdamOptions(1e-3));
  return std::make_unique<optim::AdamW>(params, optim::AdamOptions(1e-3));
}

// One gradient of 1e-4, then zeros: the state decays geometrically (0.9 per step for the momentum
// buffer and exp_avg, 0.999 for exp_avg_sq) and would pass through the denormal range.
TEST(FlushDenormals, OptimizerStateNeverHoldsDenormals) {
  for (const std::string device : {"cpu", "sim:0"}) {
    for (const std::string kind : {"sgd", "adam", "adamw"}) {
      SCOPED_TRACE(device + " " + kind);
      // 100,000 elements: the fused update runs on several threads where there are cores.
      Tensor p = zeros({100000}, Device(device)).requires_grad_();
      auto opt = make_optimizer(kind, {p});
      int64_t subnormal = 0;
      for (int step = 0; step < 800; ++step) {
        p.set_grad(full({100000}, step == 0 ? 1e-4 : 0.0).to(Device(device)));
        opt->step();
        // A value decaying by 0.9 per step spends over 150 steps in float32's denormal range
        // (1.4e-45 to 1.2e-38), so looking every 25th step cannot miss one; looking at every
        // step was a minute of the sanitizer builds.
        if (step % 25 != 0) continue;
        for (const auto& [name, t] : opt->state_dict())
          if (t.dim() > 0) subnormal += count_subnormal(t);
      }
      EXPECT_EQ(subnormal, 0);
      // 1e-4 * 0.9^799 is 2.6e-41 in IEEE arithmetic (Adam's exp_avg a tenth of it): a denormal
      // that flushing made 0.
      const std::string buffer = kind == "sgd" ? "0.momentum_buffer" : "0.exp_avg";
      EXPECT_EQ(opt->state_dict().at(buffer).abs().max().item<float>(), 0.0f);
    }
  }
}

TEST(FlushDenormals, OptimizerStepRestoresTheCallersMode) {
  Tensor p = zeros({10}).requires_grad_();
  optim::Adam opt({p}, optim::AdamOptions(1e-3));
  p.set_grad(full({10}, 1.0));
  ASSERT_EQ(detail::flush_bits(), 0u);
  opt.step();
  EXPECT_EQ(detail::flush_bits(), 0u);
  // User arithmetic keeps IEEE behaviour, on the caller and on the kernels' worker threads.
  const int64_t big = int64_t{1} << 20;  // 4 MiB: a parallel kernel
  EXPECT_EQ(count_subnormal(full({big}, kDenormal) * 1.0), big);
  EXPECT_EQ(count_subnormal(tensor({kDenormal}) * 1.0), 1);
}

TEST(FlushDenormals, SetFlushDenormalReachesEveryThreadOfAKernel) {
  const IeeeAfter restore;
  const int64_t big = int64_t{1} << 20;
  const Tensor denormals = full({big}, kDenormal);
  ASSERT_TRUE(set_flush_denormal(true));
  EXPECT_EQ((denormals * 1.0).abs().max().item<float>(), 0.0f);
  // Flushing stays on after an optimizer step: the step restores the mode it found.
  Tensor p = zeros({10}).requires_grad_();
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  p.set_grad(full({10}, 1.0));
  opt.step();
  EXPECT_EQ(detail::flush_bits(), detail::kFlushAll);
  ASSERT_TRUE(set_flush_denormal(false));
  EXPECT_EQ(count_subnormal(full({big}, kDenormal) * 1.0), big);
}

// Flushing denormals cannot change what a model learns: Adam written with tensor ops trains the
// same model through the underflow (inputs whose left half is 0 after the first step, as an
// image's rarely lit border pixels) once in IEEE arithmetic, whose state goes denormal, and once
// flushed, to the same weights; optim::Adam (flushing, one fused pass whose roundings differ
// from the ops' in the last bit) ends beside them.
TEST(FlushDenormals, FlushedAndUnflushedTrainingAgree) {
  manual_seed(11);  // the data, whatever ran before in this process (the margins below are for it)
  const Tensor lit = randn({32, 16});
  Tensor dark = lit.clone();
  dark.narrow(1, 0, 8).zero_();
  const Tensor y = randint(0, 3, {32});
  const auto make_model = [] {
    manual_seed(7);
    return nn::Sequential{nn::Linear(16, 8), nn::ReLU(), nn::Linear(8, 3)};
  };
  constexpr int kSteps = 1000;
  constexpr double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  // Adam op by op; returns the parameters and counts the denormals its state holds at the end.
  const auto train_by_ops = [&](bool flush, int64_t& denormals) {
    auto model = make_model();
    std::vector<Tensor> params = model->parameters(), m, v;
    for (const Tensor& p : params) m.push_back(zeros_like(p)), v.push_back(zeros_like(p));
    for (int step = 1; step <= kSteps; ++step) {
      model->zero_grad();
      nn::functional::cross_entropy(model(step == 1 ? lit : dark), y).backward();
      NoGradGuard no_grad;
      const detail::FlushBitsScope mode(flush ? detail::kFlushAll : 0u);
      const double bias1 = 1 - std::pow(b1, step), bias2 = 1 - std::pow(b2, step);
      for (size_t i = 0; i < params.size(); ++i) {
        const Tensor g = params[i].grad();
        m[i].mul_(b1).add_(g, 1 - b1);
        v[i].mul_(b2).add_(mul(g, g), 1 - b2);
        params[i].sub_(div(m[i], add(div(sqrt(v[i]), std::sqrt(bias2)), eps)), lr / bias1);
      }
    }
    denormals = 0;
    for (const Tensor& t : m) denormals += count_subnormal(t);
    return params;
  };
  int64_t ieee_denormals = 0, flushed_denormals = 0;
  const std::vector<Tensor> ieee = train_by_ops(false, ieee_denormals), flushed = train_by_ops(true, flushed_denormals);
  EXPECT_GT(ieee_denormals, 0) << "the IEEE run never underflowed: the test proves nothing";
  EXPECT_EQ(flushed_denormals, 0);

  auto model = make_model();
  optim::Adam adam(model->parameters(), optim::AdamOptions(lr));
  for (int step = 1; step <= kSteps; ++step) {
    adam.zero_grad();
    nn::functional::cross_entropy(model(step == 1 ? lit : dark), y).backward();
    adam.step();
  }
  const std::vector<Tensor> fused = model->parameters();
  for (size_t i = 0; i < ieee.size(); ++i) {
    EXPECT_EQ((flushed[i] - ieee[i]).abs().max().item<double>(), 0.0) << "parameter " << i;
    EXPECT_LT((fused[i] - ieee[i]).abs().max().item<double>(), 2e-3) << "parameter " << i;
  }
}

}  // namespace
}  // namespace locus
