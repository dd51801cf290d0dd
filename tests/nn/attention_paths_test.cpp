// scaled_dot_product_attention's two paths (Note [Attention paths]): the fused kernel against
// the composition on random shapes (odd lengths, L != S, Ev != E, broadcast batch dims, bool and
// float masks that broadcast, causal), values and gradients; dropout's gradient against finite
// differences under the same seed; memory linear in the length; the sdpa_kernel selector, its
// errors and the counters; which path sim takes without the fused kernel.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using nn::attention::last_sdpa_backend;
using nn::attention::SDPBackend;
using nn::attention::sdpa_backend_calls;
using nn::attention::sdpa_kernel;
using testing::values;

struct Case {
  Shape q, k, v;  // [..., L, E], [..., S, E], [..., S, Ev]
  Shape mask;     // empty: none
  bool bool_mask = false, causal = false;
};

struct Result {
  std::vector<double> out, gq, gk, gv;
};

// One forward and backward with only `backend` allowed, on copies of the same inputs.
Result run(SDPBackend backend, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal) {
  const sdpa_kernel only(backend);
  const Tensor qq = q.detach().clone().requires_grad_(true), kk = k.detach().clone().requires_grad_(true),
               vv = v.detach().clone().requires_grad_(true);
  const Tensor out = scaled_dot_product_attention(qq, kk, vv, mask, 0.0, causal);
  EXPECT_EQ(last_sdpa_backend(), backend);
  // A weighted sum, so that every output element's gradient differs.
  mul(out, linspace(-1.0, 2.0, out.numel(), TensorOptions().dtype(out.dtype())).view(out.shape())).sum().backward();
  return {values(out), values(qq.grad()), values(kk.grad()), values(vv.grad())};
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " at " << i;
  }
}

TEST(AttentionPaths, FusedKernelAgreesWithTheComposition) {
  const std::vector<Case> cases = {
      {{2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 6}, {}, false, false},
      {{1, 2, 70, 16}, {1, 2, 300, 16}, {1, 2, 300, 16}, {}, false, false},   // several key tiles, odd tails
      {{3, 130, 8}, {3, 130, 8}, {3, 130, 5}, {}, false, true},                // causal over several query tiles
      {{2, 1, 9, 4}, {1, 4, 11, 4}, {2, 4, 11, 4}, {9, 11}, true, false},     // broadcast batch, bool mask [L, S]
      {{2, 2, 6, 4}, {2, 2, 6, 4}, {2, 2, 6, 4}, {2, 1, 1, 6}, false, false},  // float key mask broadcast over heads and rows
      {{5, 3}, {270, 3}, {270, 7}, {5, 270}, false, false},                    // no batch dims
      {{1, 300, 4}, {1, 260, 4}, {1, 260, 4}, {}, false, true},                // causal with L > S
      // Whole 64x256 tiles, whose float32 products go to oneDNN's brgemm on AVX-512 CPUs.
      {{1, 2, 256, 64}, {1, 2, 512, 64}, {1, 2, 512, 64}, {}, false, false},
      {{2, 256, 32}, {2, 256, 32}, {2, 256, 32}, {}, false, true},
  };
  manual_seed(7);
  for (DType dtype : {kFloat32, kFloat64}) {
    const TensorOptions o = TensorOptions().dtype(dtype);
    const double tol = dtype == kFloat64 ? 1e-10 : 2e-5;
    for (size_t n = 0; n < cases.size(); ++n) {
      const Case& c = cases[n];
      const Tensor q = randn(c.q, o), k = randn(c.k, o), v = randn(c.v, o);
      Tensor mask;
      if (!c.mask.empty()) mask = c.bool_mask ? gt(rand(c.mask), 0.3) : randn(c.mask, o);
      if (c.bool_mask) mask.select(-1, 0).fill_(true);  // every query keeps a key
      const std::string what = "case " + std::to_string(n) + " " + std::string(dtype_name(dtype));
      const Result fused = run(SDPBackend::FLASH_ATTENTION, q, k, v, mask, c.causal);
      const Result math = run(SDPBackend::MATH, q, k, v, mask, c.causal);
      expect_near_all(fused.out, math.out, tol, what + " out");
      expect_near_all(fused.gq, math.gq, tol, what + " grad q");
      expect_near_all(fused.gk, math.gk, tol, what + " grad k");
      expect_near_all(fused.gv, math.gv, tol, what + " grad v");
    }
  }
}

TEST(AttentionPaths, AQueryWithEveryKeyMaskedIsNaNOnBothPaths) {
  const Tensor q = randn({1, 3, 4}), k = randn({1, 5, 4}), v = randn({1, 5, 2});
  Tensor mask = ones({3, 5}, TensorOptions().dtype(kBool));
  mask[1].fill_(false);
  for (SDPBackend b : {SDPBackend::FLASH_ATTENTION, SDPBackend::MATH}) {
    const sdpa_kernel only(b);
    const std::vector<double> out = values(scaled_dot_product_attention(q, k, v, mask));
    EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3])) << nn::attention::sdpa_backend_name(b);
    EXPECT_FALSE(std::isnan(out[0]) || std::isnan(out[5])) << nn::attention::sdpa_backend_name(b);
  }
}

TEST(AttentionPaths, BFloat16RunsFusedInFloat32) {
  manual_seed(3);
  const Tensor q = randn({2, 2, 33, 16}), k = randn({2, 2, 40, 16}), v = randn({2, 2, 40, 16});
  Tensor reference;
  {
    const sdpa_kernel only(SDPBackend::MATH);
    reference = scaled_dot_product_attention(q, k, v, {}, 0.0, true);
  }
  const sdpa_kernel only(SDPBackend::FLASH_ATTENTION);
  const Tensor out = scaled_dot_product_attention(q.to(kBFloat16), k.to(kBFloat16), v.to(kBFloat16), {}, 0.0, true);
  EXPECT_EQ(out.dtype(), kBFloat16);
  EXPECT_EQ(last_sdpa_backend(), SDPBackend::FLASH_ATTENTION);
  // bfloat16 inputs carry 8 significant bits: a few hundredths on values of order 1.
  expect_near_all(values(out), values(reference), 0.03, "bf16");
}

// With dropout, the fused backward must be the derivative of the fused forward under the same
// draws: central differences in float64, reseeding before each forward.
TEST(AttentionPaths, DropoutGradientMatchesFiniteDifferences) {
  const TensorOptions o = TensorOptions().dtype(kFloat64);
  manual_seed(11);
  const Tensor q0 = randn({2, 5, 3}, o), k0 = randn({2, 6, 3}, o), v0 = randn({2, 6, 4}, o);
  const Tensor w = randn({2, 5, 4}, o);
  const sdpa_kernel only(SDPBackend::FLASH_ATTENTION);
  const auto loss = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    manual_seed(99);
    return mul(scaled_dot_product_attention(q, k, v, {}, 0.4), w).sum();
  };
  const Tensor q = q0.clone().requires_grad_(true), k = k0.clone().requires_grad_(true), v = v0.clone().requires_grad_(true);
  loss(q, k, v).backward();
  const double h = 1e-6;
  for (int which = 0; which < 3; ++which) {
    const Tensor& base = which == 0 ? q0 : which == 1 ? k0 : v0;
    const std::vector<double> analytic = values((which == 0 ? q : which == 1 ? k : v).grad());
    for (int64_t i = 0; i < base.numel(); i += 3) {
      Tensor plus = base.clone(), minus = base.clone();
      plus.view({-1})[i].add_(h);
      minus.view({-1})[i].sub_(h);
      const auto at = [&](const Tensor& t) {
        return loss(which == 0 ? t : q0, which == 1 ? t : k0, which == 2 ? t : v0).item<double>();
      };
      EXPECT_NEAR(analytic[static_cast<size_t>(i)], (at(plus) - at(minus)) / (2 * h), 1e-6) << "input " << which << " at " << i;
    }
  }
  // Some weights were dropped: the output differs from the one without dropout.
  manual_seed(99);
  const Tensor dropped = scaled_dot_product_attention(q0, k0, v0, {}, 0.4);
  EXPECT_GT(max(abs(sub(dropped, scaled_dot_product_attention(q0, k0, v0)))).item<double>(), 1e-3);
}

// The fused path never holds the [L, S] scores: at L = S = 2048 they would be 16 MiB in float32,
// while the inputs, output and gradients are ~2.3 MiB.
TEST(AttentionPaths, FusedMemoryIsLinearInTheLength) {
  const Device cpu("cpu");
  const Tensor q = randn({1, 2048, 32}).requires_grad_(true), k = randn({1, 2048, 32}).requires_grad_(true),
               v = randn({1, 2048, 32}).requires_grad_(true);
  memory::reset_peak_memory_stats(cpu);
  const int64_t before = memory::memory_allocated(cpu);
  {
    const sdpa_kernel only(SDPBackend::FLASH_ATTENTION);
    scaled_dot_product_attention(q, k, v, {}, 0.0, true).sum().backward();
  }
  EXPECT_LT(memory::max_memory_allocated(cpu) - before, int64_t{4} << 20);
}

TEST(AttentionPaths, SdpaKernelSelectsCountsAndRefuses) {
  const Tensor q = randn({2, 4, 8}), k = randn({2, 6, 8}), v = randn({2, 6, 8});
  const int64_t math_before = sdpa_backend_calls(SDPBackend::MATH);
  const int64_t flash_before = sdpa_backend_calls(SDPBackend::FLASH_ATTENTION);
  scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(last_sdpa_backend(), SDPBackend::FLASH_ATTENTION);  // the default prefers the fused kernel
  {
    const sdpa_kernel outer(SDPBackend::MATH);
    scaled_dot_product_attention(q, k, v);
    EXPECT_EQ(last_sdpa_backend(), SDPBackend::MATH);
    {
      const sdpa_kernel inner({SDPBackend::FLASH_ATTENTION, SDPBackend::MATH});
      scaled_dot_product_attention(q, k, v);
      EXPECT_EQ(last_sdpa_backend(), SDPBackend::FLASH_ATTENTION);
    }
    scaled_dot_product_attention(q, k, v);
    EXPECT_EQ(last_sdpa_backend(), SDPBackend::MATH);  // the outer choice is back
  }
  EXPECT_EQ(sdpa_backend_calls(SDPBackend::MATH) - math_before, 2);
  EXPECT_EQ(sdpa_backend_calls(SDPBackend::FLASH_ATTENTION) - flash_before, 2);
  {
    const sdpa_kernel only(SDPBackend::CUDNN_ATTENTION);
    testing::expect_error<NotImplementedError>(
        [&] { scaled_dot_product_attention(q, k, v); },
        "[locus::scaled_dot_product_attention] no available kernel (CUDNN_ATTENTION: the operands are not on a CUDA "
        "device; MATH: not allowed by sdpa_kernel)");
  }
  {
    // A float mask being differentiated needs the composition.
    const sdpa_kernel only(SDPBackend::FLASH_ATTENTION);
    const Tensor mask = zeros({4, 6}).requires_grad_(true);
    testing::expect_error<NotImplementedError>(
        [&] { scaled_dot_product_attention(q, k, v, mask); },
        "[locus::scaled_dot_product_attention] no available kernel (FLASH_ATTENTION: attn_mask requires grad; MATH: not "
        "allowed by sdpa_kernel)");
  }
  testing::expect_error<ValueError>([] { sdpa_kernel none(std::vector<SDPBackend>{}); },
                                    "sdpa_kernel: give at least one backend");
}

// Note [cuDNN attention]: float16 and bfloat16 on CUDA take cuDNN's fused graphs, forward and
// backward. Their values and gradients are those of the float32 composition on the same rounded
// inputs, within the 16-bit types' rounding; float32 on CUDA takes the composition.
TEST(AttentionPaths, CudnnOnCudaAgreesWithTheComposition) {
  REQUIRE_CUDA();
  manual_seed(5);
  const Device cuda("cuda:0");
  const std::vector<Case> cases = {
      {{2, 4, 128, 64}, {2, 4, 128, 64}, {2, 4, 128, 64}, {}, false, false},
      {{2, 4, 100, 64}, {2, 4, 100, 64}, {2, 4, 100, 64}, {}, false, true},
      {{1, 8, 64, 128}, {1, 8, 192, 128}, {1, 8, 192, 128}, {64, 192}, true, false},  // one bias for the batch
      {{2, 2, 32, 64}, {2, 2, 48, 64}, {2, 2, 48, 64}, {2, 1, 32, 48}, false, false},  // a bias per batch entry
      {{2, 2, 32, 64}, {2, 2, 48, 64}, {2, 2, 48, 64}, {}, false, true},  // causal, L < S: the top-left diagonal
  };
  for (DType dtype : {kBFloat16, kFloat16}) {
    for (size_t n = 0; n < cases.size(); ++n) {
      const Case& c = cases[n];
      const auto rounded = [&](const Tensor& t) { return t.to(dtype).to(kFloat32); };
      const Tensor q = rounded(randn(c.q)), k = rounded(randn(c.k)), v = rounded(randn(c.v));
      Tensor mask;
      if (!c.mask.empty()) mask = c.bool_mask ? gt(rand(c.mask), 0.2) : rounded(randn(c.mask));
      const auto pass = [&](SDPBackend backend, Device device, DType dt) {
        const sdpa_kernel only(backend);
        // detach(): to() may hand back q itself, which must stay a plain input for the next pass.
        const Tensor qq = q.to(device, dt).detach().requires_grad_(true), kk = k.to(device, dt).detach().requires_grad_(true),
                     vv = v.to(device, dt).detach().requires_grad_(true);
        const Tensor m = !mask.defined() ? Tensor() : mask.dtype() == kBool ? mask.to(device) : mask.to(device, dt);
        const Tensor out = scaled_dot_product_attention(qq, kk, vv, m, 0.0, c.causal);
        EXPECT_EQ(last_sdpa_backend(), backend) << dtype;
        const Tensor weights = rounded(linspace(-1.0, 2.0, out.numel())).view(out.shape()).to(device, dt);
        mul(out, weights).sum().backward();
        const auto host = [](const Tensor& t) { return values(t.cpu().to(kFloat64)); };
        return Result{host(out), host(qq.grad()), host(kk.grad()), host(vv.grad())};
      };
      const Result want = pass(SDPBackend::MATH, Device("cpu"), kFloat32);
      const Result got = pass(SDPBackend::CUDNN_ATTENTION, cuda, dtype);
      const double tol = dtype == kBFloat16 ? 4e-2 : 8e-3;
      const std::string what = std::string(dtype_name(dtype)) + " case " + std::to_string(n);
      expect_near_all(got.out, want.out, tol, what + " out");
      expect_near_all(got.gq, want.gq, tol, what + " grad q");
      expect_near_all(got.gk, want.gk, tol, what + " grad k");
      expect_near_all(got.gv, want.gv, tol, what + " grad v");
    }
  }
  const Tensor q = randn({2, 4, 64, 64}, TensorOptions().device(cuda));
  scaled_dot_product_attention(q, q, q);
  EXPECT_EQ(last_sdpa_backend(), SDPBackend::MATH);  // float32: cuDNN declines, the composition runs
  // Dropout inside cuDNN: the same seed gives the same result and gradients (the backward drops
  // what the forward did, deterministically), another seed other ones; with p -> 0 the result is
  // the plain attention's.
  const Tensor h = q.to(kBFloat16);
  const auto dropped = [&](uint64_t seed, double p) {
    manual_seed(seed);
    const Tensor x = h.detach().requires_grad_(true);
    const Tensor out = scaled_dot_product_attention(x, x, x, Tensor(), p);
    EXPECT_EQ(last_sdpa_backend(), SDPBackend::CUDNN_ATTENTION);
    out.sum().backward();
    return std::vector<std::vector<double>>{values(out.cpu().to(kFloat64)), values(x.grad().cpu().to(kFloat64))};
  };
  const auto first = dropped(1, 0.3);
  EXPECT_EQ(dropped(1, 0.3), first);
  EXPECT_NE(dropped(2, 0.3)[0], first[0]);
  const auto plain = values(scaled_dot_product_attention(h, h, h).cpu().to(kFloat64));
  expect_near_all(dropped(1, 1e-7)[0], plain, 1e-2, "dropout 1e-7");
}

TEST(AttentionPaths, SimWithoutTheFusedKernelTakesTheComposition) {
  const sim::Config original = sim::config();
  sim::Config c = original;
  c.unsupported_ops = {"scaled_dot_product_attention"};
  sim::configure(c);
  const Tensor q = randn({2, 4, 8}), k = randn({2, 6, 8}), v = randn({2, 6, 8});
  std::vector<double> on_sim;
  {
    const Device sim("sim:0");
    on_sim = values(scaled_dot_product_attention(q.to(sim), k.to(sim), v.to(sim)));
    EXPECT_EQ(last_sdpa_backend(), SDPBackend::MATH);
  }
  sim::configure(original);
  const Tensor on_cpu = scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(last_sdpa_backend(), SDPBackend::FLASH_ATTENTION);
  expect_near_all(on_sim, values(on_cpu), 2e-5, "sim vs cpu");
}

}  // namespace
}  // namespace locus
