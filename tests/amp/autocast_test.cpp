// Autocast: the three lists' result dtypes, values and gradients against float64, the weight
// cache, nesting, thread-locality and the errors of an autocast that cannot be served.

#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

class Autocast : public testing::OnEachDevice {};

// One row per op of the lists. `expected` is PyTorch's documented CUDA behaviour ("Autocast Op
// Reference"), which Locus follows on every device type. `torch_cpu` is what torch.autocast("cpu",
// bfloat16) of Debian's PyTorch 1.13 returned for the same call (tests/amp/autocast_table.py
// prints it): it differs on the float32 list, which PyTorch's CPU lists leave in bfloat16
// (docs/design.md, "Autocast lists").
struct Row {
  const char* op;
  std::function<Tensor(const Tensor& x, const Tensor& w)> run;  // x [4, 8] float32, w [8, 8] float32 weight
  enum { Lower, F32, Widest } expected;
  const char* torch_cpu;
};

std::vector<Row> rows() {
  const auto targets = [](const Tensor& x) { return tensor({0L, 1L, 2L, 3L}).to(x.device()); };
  return {
      {"matmul", [](auto& x, auto& w) { return matmul(x, w); }, Row::Lower, "bfloat16"},
      {"mm", [](auto& x, auto& w) { return mm(x, w); }, Row::Lower, "bfloat16"},
      {"batched matmul", [](auto& x, auto& w) { return matmul(x.unsqueeze(0), w.unsqueeze(0)); }, Row::Lower, "bfloat16"},
      {"linear", [](auto& x, auto& w) { return locus::linear(x, w, w[0]); }, Row::Lower, "bfloat16"},
      {"softmax", [](auto& x, auto& w) { return softmax(mm(x, w), 1); }, Row::F32, "bfloat16"},
      {"log_softmax", [](auto& x, auto& w) { return log_softmax(mm(x, w), 1); }, Row::F32, "bfloat16"},
      {"exp", [](auto& x, auto& w) { return exp(mm(x, w)); }, Row::F32, "bfloat16"},
      {"expm1", [](auto& x, auto& w) { return expm1(mm(x, w)); }, Row::F32, "bfloat16"},
      {"log", [](auto& x, auto& w) { return log(mm(x, w)); }, Row::F32, "bfloat16"},
      {"log1p", [](auto& x, auto& w) { return log1p(mm(x, w)); }, Row::F32, "bfloat16"},
      {"rsqrt", [](auto& x, auto& w) { return rsqrt(mm(x, w)); }, Row::F32, "bfloat16"},
      {"pow", [](auto& x, auto& w) { return pow(mm(x, w), 2); }, Row::F32, "bfloat16"},
      {"pow tensor", [](auto& x, auto& w) { return pow(mm(x, w), mm(x, w)); }, Row::F32, "bfloat16"},
      {"sum", [](auto& x, auto& w) { return mm(x, w).sum(); }, Row::F32, "bfloat16"},
      {"sum dim", [](auto& x, auto& w) { return sum(mm(x, w), 1); }, Row::F32, "bfloat16"},
      {"mean", [](auto& x, auto& w) { return mm(x, w).mean(); }, Row::F32, "bfloat16"},
      {"mse_loss", [](auto& x, auto& w) { return locus::mse_loss(mm(x, w), x); }, Row::F32, "float32"},
      {"cross_entropy", [=](auto& x, auto& w) { return nn::functional::cross_entropy(mm(x, w), targets(x)); }, Row::F32, "float32"},
      {"nll_loss", [=](auto& x, auto& w) { return nn::functional::nll_loss(mm(x, w), targets(x)); }, Row::F32, "float32"},
      {"cat", [](auto& x, auto& w) { return cat({mm(x, w), x}); }, Row::Widest, "float32"},
      {"stack", [](auto& x, auto& w) { return stack({mm(x, w), x}); }, Row::Widest, "float32"},
      {"add", [](auto& x, auto& w) { return mm(x, w) + x; }, Row::Widest, "float32"},
      {"mul", [](auto& x, auto& w) { return mm(x, w) * x; }, Row::Widest, "float32"},
      {"where", [](auto& x, auto& w) { return where(x > 0, mm(x, w), x); }, Row::Widest, "float32"},
  };
}

TEST_P(Autocast, ResultDtypesFollowThePyTorchLists) {
  const Tensor x = randn({4, 8}, dev());
  const Tensor w = randn({8, 8}, dev()).requires_grad_();
  for (const DType lower : {kBFloat16, kFloat16}) {
    const amp::AutocastGuard guard(dev().type(), lower);
    for (const Row& row : rows()) {
      const DType want = row.expected == Row::Lower ? lower : kFloat32;
      EXPECT_EQ(row.run(x, w).dtype(), want) << row.op << " in " << dtype_name(lower) << " on " << dev();
    }
  }
  // Outside the guard nothing changes.
  for (const Row& row : rows()) EXPECT_EQ(row.run(x, w).dtype(), kFloat32) << row.op;
}

TEST_P(Autocast, Float64StaysFloat64AndOtherDevicesAreUntouched) {
  const amp::AutocastGuard guard(dev().type(), kBFloat16);
  EXPECT_EQ(mm(ones({2, 2}, TensorOptions().dtype(kFloat64).device(dev())), ones({2, 2}, TensorOptions().dtype(kFloat64).device(dev()))).dtype(), kFloat64);
  const Device other = dev().is_cpu() ? Device("sim:0") : Device("cpu");
  EXPECT_EQ(mm(ones({2, 2}, other), ones({2, 2}, other)).dtype(), kFloat32);
}

// linear and softmax against float64 references of the rounded operands.
TEST_P(Autocast, ValuesMatchFloat64WithinThePrecision) {
  const Tensor x = randn({16, 32}, dev()), w = randn({8, 32}, dev()), b = randn({8}, dev());
  for (const DType lower : {kBFloat16, kFloat16}) {
    Tensor y, p;
    {
      const amp::AutocastGuard guard(dev().type(), lower);
      y = locus::linear(x, w, b);
      p = softmax(y, 1);
    }
    const auto rounded = [&](const Tensor& t) { return t.to(lower).to(kFloat64).cpu(); };
    const Tensor ref_y = matmul(rounded(x), rounded(w).t()) + rounded(b);
    // Products accumulate in float32; only the result's rounding to the lower precision is left.
    const double eps = lower == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    expect_close(y, values(ref_y), eps, 8 * eps);  // |x w| reaches ~10: the absolute part covers cancellation
    const Tensor ref_p = softmax(y.to(kFloat64).cpu(), 1);
    EXPECT_EQ(p.dtype(), kFloat32);
    expect_close(p, values(ref_p), 1e-5, 1e-6);
  }
}

TEST_P(Autocast, GradientsArriveInEachLeafsDtype) {
  const Tensor x = randn({5, 6}, dev());
  const Tensor w = randn({3, 6}, dev()).requires_grad_();
  const Tensor b = randn({3}, dev()).requires_grad_();
  const Tensor w64 = randn({3, 6}, TensorOptions().dtype(kFloat64).device(dev())).requires_grad_();
  Tensor loss;
  {
    const amp::AutocastGuard guard(dev().type());
    const Tensor h = locus::linear(x, w, b);
    EXPECT_EQ(h.dtype(), amp::default_autocast_dtype(dev().type()));
    loss = locus::mse_loss(h, zeros({5, 3}, dev())) + mm(x.to(kFloat64), w64.t()).sum();
    EXPECT_EQ(loss.dtype(), kFloat64);
    loss.backward();  // backward inside the guard runs in the dtypes forward chose
  }
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  EXPECT_EQ(b.grad().dtype(), kFloat32);
  EXPECT_EQ(w64.grad().dtype(), kFloat64);
  // Against float64: d/dW mean((xW^T + b)^2) = 2/15 * (xW^T + b)^T x.
  const Tensor x64 = x.to(kFloat64).cpu(), W = w.detach().to(kFloat64).cpu(), B = b.detach().to(kFloat64).cpu();
  const Tensor h64 = matmul(x64, W.t()) + B;
  const bool bf16 = amp::default_autocast_dtype(dev().type()) == kBFloat16;
  const double rtol = bf16 ? 3e-2 : 4e-3, atol = bf16 ? 0.1 : 0.02;
  expect_close(w.grad(), values(matmul(h64.t(), x64) * (2.0 / 15)), rtol, atol);
  expect_close(b.grad(), values(h64.sum(0) * (2.0 / 15)), rtol, atol);
}

TEST_P(Autocast, AWeightUsedThreeTimesIsCastOnce) {
  const Tensor w = randn({8, 8}, dev()).requires_grad_();
  const Tensor x = randn({4, 8}, dev());
  const amp::AutocastCounts before = amp::autocast_counts();
  {
    const amp::AutocastGuard guard(dev().type());
    Tensor h = mm(x, w);
    h = mm(h, w);  // h is already in the lower precision: no cast
    h = mm(h, w);
    const amp::AutocastCounts inner = amp::autocast_counts();
    EXPECT_EQ(inner.casts - before.casts, 2);  // x once, w once
    EXPECT_EQ(inner.cache_hits - before.cache_hits, 2);
    {
      const amp::AutocastGuard nested(dev().type());  // the cache lives as long as the outermost guard
      mm(h, w);
    }
    EXPECT_EQ(amp::autocast_counts().casts - before.casts, 2);
    h.sum().backward();
  }
  const amp::AutocastCounts after = amp::autocast_counts();
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  {
    const amp::AutocastGuard guard(dev().type());  // a new region casts anew
    mm(x.to(amp::default_autocast_dtype(dev().type())), w);
  }
  EXPECT_EQ(amp::autocast_counts().casts - after.casts, 1);
  {
    const amp::AutocastGuard guard(dev().type(), std::nullopt, true, /*cache_enabled=*/false);
    const Tensor h = x.to(amp::default_autocast_dtype(dev().type()));
    mm(h, w), mm(h, w);
  }
  EXPECT_EQ(amp::autocast_counts().casts - after.casts, 3);
}

// A cast made under NoGradGuard has no graph: a later recording use in the same region gets its own.
TEST_P(Autocast, ACastMadeWithoutGradDoesNotServeARecordingOp) {
  const Tensor w = randn({4, 4}, dev()).requires_grad_();
  const Tensor x = randn({2, 4}, dev());
  const amp::AutocastGuard guard(dev().type());
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(mm(x, w).requires_grad());
  }
  const Tensor y = mm(x, w);
  ASSERT_TRUE(y.requires_grad());
  y.sum().backward();
  EXPECT_TRUE(w.grad().defined());
}

TEST_P(Autocast, GuardsNestAndSwitchOff) {
  const DeviceType type = dev().type();
  const Tensor a = randn({2, 2}, dev()), b = randn({2, 2}, dev());
  EXPECT_FALSE(amp::is_autocast_enabled(type));
  {
    const amp::AutocastGuard outer(type, kBFloat16);
    EXPECT_TRUE(amp::is_autocast_enabled(type));
    EXPECT_EQ(amp::autocast_dtype(type), kBFloat16);
    {
      const amp::AutocastGuard off(type, false);
      EXPECT_FALSE(amp::is_autocast_enabled(type));
      EXPECT_EQ(mm(a, b).dtype(), kFloat32);
      {
        const amp::AutocastGuard half(type, kFloat16);
        EXPECT_EQ(mm(a, b).dtype(), kFloat16);
      }
      EXPECT_EQ(mm(a, b).dtype(), kFloat32);
    }
    EXPECT_EQ(mm(a, b).dtype(), kBFloat16);
  }
  EXPECT_FALSE(amp::is_autocast_enabled(type));
  EXPECT_EQ(amp::autocast_dtype(type), amp::default_autocast_dtype(type));
  EXPECT_EQ(mm(a, b).dtype(), kFloat32);
}

TEST_P(Autocast, IsPerThread) {
  const amp::AutocastGuard guard(dev().type(), kBFloat16);
  bool other_enabled = true;
  DType other_dtype = kBFloat16;
  std::thread t([&] {
    other_enabled = amp::is_autocast_enabled(dev().type());
    other_dtype = mm(ones({2, 2}, dev()), ones({2, 2}, dev())).dtype();
  });
  t.join();
  EXPECT_FALSE(other_enabled);
  EXPECT_EQ(other_dtype, kFloat32);
  EXPECT_EQ(mm(ones({2, 2}, dev()), ones({2, 2}, dev())).dtype(), kBFloat16);
}

TEST_P(Autocast, InPlaceAndOutFormsKeepTheirDtype) {
  const amp::AutocastGuard guard(dev().type(), kBFloat16);
  Tensor t = ones({3}, TensorOptions().dtype(kBFloat16).device(dev()));
  EXPECT_EQ(t.exp_().dtype(), kBFloat16);  // PyTorch does not autocast in-place ops either
  Tensor out = empty({2, 2}, dev());
  mm_out(out, ones({2, 2}, dev()), ones({2, 2}, dev()));
  EXPECT_EQ(out.dtype(), kFloat32);
  expect_close(out, {2, 2, 2, 2});
}

INSTANTIATE_TEST_SUITE_P(Devices, Autocast, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

// Where PyTorch warns and switches itself off, Locus says why and does nothing.
TEST(AutocastErrors, AnUnservableDtypeOrDeviceTypeIsAValueError) {
  try {
    amp::AutocastGuard guard(kCPU, kFloat32);
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[locus::amp] autocast on cpu in float32: autocast runs ops in a lower precision, float16 or bfloat16; "
              "float32 is not one (to switch autocast off in a region, pass enabled=false)");
  }
  EXPECT_FALSE(amp::is_autocast_enabled(kCPU));
  EXPECT_THROW(amp::AutocastGuard(DeviceType::Sim, kInt32), ValueError);
  try {
    amp::AutocastGuard guard(DeviceType::MPS);
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[locus::amp] autocast on mps in float16: this device type cannot be used: "), std::string::npos)
        << e.what();
  }
  if (!cuda::is_available()) {
    try {
      amp::AutocastGuard guard(kCUDA);
      ADD_FAILURE();
    } catch (const ValueError& e) {
      EXPECT_EQ(std::string(e.what()), "[locus::amp] autocast on cuda in float16: this device type cannot be used: " +
                                           cuda::unavailable_reason());
    }
    EXPECT_FALSE(amp::is_autocast_enabled(kCUDA));
    amp::AutocastGuard off(kCUDA, false);  // switching it off needs no device
  }
}

TEST(AutocastErrors, ASimDeviceWithoutTheProductKernelIsAValueError) {
  const sim::Config original = sim::config();
  sim::Config lacking = original;
  lacking.unsupported_ops = {"matmul:bfloat16"};
  sim::configure(lacking);
  try {
    amp::AutocastGuard guard(DeviceType::Sim, kBFloat16);
    ADD_FAILURE();
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[locus::amp] autocast on sim in bfloat16: the device type has no bfloat16 matmul kernel, so autocast's "
              "lower-precision ops could not run there");
  }
  amp::AutocastGuard fp16(DeviceType::Sim, kFloat16);
  sim::configure(original);
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// DataParallel's replica threads run under the caller's autocast, as in PyTorch.
TEST(AutocastDataParallel, ReplicasRunUnderTheCallersAutocast) {
  manual_seed(0);
  nn::Linear layer(8, 4);
  layer->to(Device("sim:0"));
  nn::DataParallel dp(layer, std::vector<Device>{Device("sim:0"), Device("sim:1")});
  const Tensor x = randn({6, 8}, Device("sim:0"));
  const amp::AutocastGuard guard(DeviceType::Sim, kBFloat16);
  const Tensor out = dp(x);
  EXPECT_EQ(out.dtype(), kBFloat16);
  Tensor ref;
  {
    const amp::AutocastGuard off(DeviceType::Sim, false);
    ref = layer(x.to(kBFloat16).to(kFloat32));
  }
  testing::expect_close(out, values(ref), 1.0 / 64, 1.0 / 32);
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// A guard with cache_enabled=false inside a caching region casts anew; leaving it restores caching.
TEST(AutocastCache, CacheSettingIsPerGuard) {
  const Tensor w = randn({4, 4}).requires_grad_();
  const Tensor h = randn({2, 4}).to(kBFloat16);
  const amp::AutocastGuard outer(kCPU);
  const amp::AutocastCounts start = amp::autocast_counts();
  {
    const amp::AutocastGuard inner(kCPU, std::nullopt, true, /*cache_enabled=*/false);
    mm(h, w), mm(h, w);
  }
  EXPECT_EQ(amp::autocast_counts().casts - start.casts, 2);
  mm(h, w), mm(h, w);
  EXPECT_EQ(amp::autocast_counts().casts - start.casts, 3);
}

// bfloat16 products (oneDNN where the build has it) in every layout the front end hands over.
TEST(BFloat16Products, EveryLayoutMatchesFloat64) {
  struct Case { Shape a, b; bool ta, tb; };
  for (const Case& c : {Case{{1, 33}, {33, 17}, false, false}, Case{{9, 33}, {33, 1}, false, false},
                        Case{{33, 9}, {17, 33}, true, true}, Case{{3, 5, 8}, {8, 6}, false, false},
                        Case{{5, 8}, {4, 8, 6}, false, false}, Case{{2, 1, 7, 8}, {3, 8, 2}, false, false},
                        Case{{64, 784}, {256, 784}, false, true}}) {
    Tensor a = randn(c.a).to(kBFloat16), b = randn(c.b).to(kBFloat16);
    if (c.ta) a = a.t();
    if (c.tb) b = b.t();
    const Tensor got = matmul(a, b);
    ASSERT_EQ(got.dtype(), kBFloat16);
    const Tensor want = matmul(a.to(kFloat64), b.to(kFloat64));
    ASSERT_EQ(got.shape(), want.shape());
    // float32 accumulation, one rounding to bfloat16 (8 bits): relative 2^-8 of the largest term.
    const double scale = values(abs(want).max())[0];
    testing::expect_close(got, values(want), 1.0 / 128, scale / 128);
  }
}

}  // namespace
}  // namespace locus
