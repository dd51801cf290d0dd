// The reductions of the op table (LOCUS_REDUCE_OPS) beyond what the golden family checks
// against PyTorch: tensors large enough for the CPU kernels' parallel branches against a float64
// loop on the host, the structured path's fallback and error policy, and the methods.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

// Row-wise (dim 1) and column-wise (dim 0) reference of a [rows, cols] float64 matrix.
struct Reference {
  int64_t rows, cols;
  std::vector<double> v;
  template <class Fold>
  std::vector<double> along(int dim, Fold fold) const {
    std::vector<double> out;
    const int64_t n_out = dim == 1 ? rows : cols, n_in = dim == 1 ? cols : rows;
    for (int64_t o = 0; o < n_out; ++o) {
      std::vector<double> slice;
      for (int64_t i = 0; i < n_in; ++i) slice.push_back(dim == 1 ? v[o * cols + i] : v[i * cols + o]);
      out.push_back(fold(slice));
    }
    return out;
  }
};

double ref_logsumexp(const std::vector<double>& s) {
  double m = -INFINITY, t = 0;
  for (double x : s) m = std::max(m, x);
  for (double x : s) t += std::exp(x - m);
  return m + std::log(t);
}
double ref_var(const std::vector<double>& s) {
  double mean = 0, ss = 0;
  for (double x : s) mean += x;
  mean /= static_cast<double>(s.size());
  for (double x : s) ss += (x - mean) * (x - mean);
  return ss / static_cast<double>(s.size() - 1);
}
double ref_norm3(const std::vector<double>& s) {
  double t = 0;
  for (double x : s) t += std::pow(std::abs(x), 3);
  return std::cbrt(t);
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double rel, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], rel * (std::abs(want[i]) + 1)) << what << " at " << i;
}

class LargeReductions : public testing::OnEachDevice {};

// 513 x 2053 float32 (4 MiB): past the CPU kernels' parallel threshold whichever dim is reduced.
TEST_P(LargeReductions, MatchAFloat64LoopAlongEitherDim) {
  manual_seed(7);
  const Tensor x64 = randn({513, 2053}, TensorOptions().dtype(kFloat64));
  const Reference ref{513, 2053, values(x64)};
  const Tensor x = x64.to(dev(), kFloat32);
  for (int dim : {0, 1}) {
    expect_near_all(values(logsumexp(x, dim)), ref.along(dim, ref_logsumexp), 1e-5, "logsumexp");
    expect_near_all(values(var(x, Shape{dim})), ref.along(dim, ref_var), 1e-5, "var");
    expect_near_all(values(norm(x, 3, Shape{dim})), ref.along(dim, ref_norm3), 1e-5, "norm p=3");
    expect_near_all(values(amax(x, dim)),
                    ref.along(dim, [](const std::vector<double>& s) { return static_cast<double>(static_cast<float>(*std::max_element(s.begin(), s.end()))); }),
                    0, "amax");
    expect_near_all(values(count_nonzero(gt(x, 1.0), dim)),
                    ref.along(dim, [](const std::vector<double>& s) { return static_cast<double>(std::count_if(s.begin(), s.end(), [](double v) { return static_cast<float>(v) > 1.0f; })); }),
                    0, "count_nonzero");
  }
  // A full reduction: one output, split across threads.
  const std::vector<double>& every = ref.v;
  EXPECT_NEAR(logsumexp(x, Shape{0, 1}).item<double>(), ref_logsumexp(every), 1e-5 * 15);
  EXPECT_NEAR(x.var().item<double>(), ref_var(every), 1e-5);
  EXPECT_NEAR(x.std().item<double>(), std::sqrt(ref_var(every)), 1e-5);
  const bool any_above_4 = std::any_of(every.begin(), every.end(), [](double v) { return static_cast<float>(v) > 4.0f; });
  const bool all_above_m4 = std::all_of(every.begin(), every.end(), [](double v) { return static_cast<float>(v) > -4.0f; });
  EXPECT_EQ(any(gt(x, 4.0)).item<bool>(), any_above_4);
  EXPECT_EQ(all(gt(x, -4.0)).item<bool>(), all_above_m4);
  EXPECT_EQ(gt(x, 4.0).any().item<bool>(), any_above_4);
}

// A device lacking a reduction runs it on the CPU under the fallback policy (values and
// gradients as on the CPU, counted), or refuses with the op's name under the error policy.
TEST(ReductionPath, FallbackRunsTheSameReductionWithItsGradient) {
  const sim::Config cfg = sim::config();
  sim::Config lacking = cfg;
  lacking.unsupported_ops = {"var", "logsumexp"};
  sim::configure(lacking);
  const CpuFallback policy = cpu_fallback();
  set_cpu_fallback(CpuFallback::Silent);
  {  // the sim tensors go before the configuration is restored
  const Tensor host = tensor({{1.0, 2.0, 4.0}, {-1.0, 0.5, 3.0}}, TensorOptions().dtype(kFloat64)).requires_grad_();
  const Tensor on_sim = host.detach().to("sim:0").requires_grad_();
  const int64_t before = fallback_count("var");
  const Tensor v_sim = var(on_sim, Shape{1});
  EXPECT_EQ(fallback_count("var"), before + 1);
  EXPECT_EQ(v_sim.device(), Device("sim:0"));
  const Tensor v_cpu = var(host, Shape{1});
  testing::expect_close(v_sim, values(v_cpu));
  v_sim.sum().backward();
  v_cpu.sum().backward();
  testing::expect_close(on_sim.grad(), values(host.grad()));
  set_cpu_fallback(CpuFallback::Error);
  try {
    logsumexp(on_sim, 0);
    ADD_FAILURE() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[locus::logsumexp] not implemented for device 'sim:0'", 0), 0u) << e.what();
  }
  }
  set_cpu_fallback(policy);
  sim::configure(cfg);
}

// The rules of the op table's ReduceRule column, as PyTorch.
TEST(ReductionPath, ResultDtypesFollowTheRule) {
  const Tensor i = tensor({1L, 2L, 3L});
  EXPECT_EQ(prod(i).dtype(), kInt64);
  EXPECT_EQ(prod(i.to(kInt8)).dtype(), kInt64);
  EXPECT_EQ(prod(i, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(logsumexp(i, 0).dtype(), get_default_dtype());
  EXPECT_EQ(amax(i.to(kInt16)).dtype(), kInt16);
  EXPECT_EQ(any(i.to(kUInt8)).dtype(), kUInt8);
  EXPECT_EQ(all(i.to(kFloat32)).dtype(), kBool);
  EXPECT_EQ(count_nonzero(i.to(kFloat16)).dtype(), kInt64);
  EXPECT_THROW(var(i), DTypeError);
  EXPECT_THROW(norm(i), DTypeError);
  EXPECT_THROW(norm(i.to(kFloat32), "nuc"), ValueError);
  EXPECT_THROW(amax(zeros({3, 0}), 1), IndexError);
  EXPECT_EQ(amax(zeros({0, 3}), 1).numel(), 0);  // only the kept dim is empty: an empty result, as PyTorch
  auto [v, m] = var_mean(tensor({1.0, 2.0, 3.0, 4.0}, TensorOptions().dtype(kFloat64)));
  EXPECT_DOUBLE_EQ(v.item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.item<double>(), 2.5);
  EXPECT_DOUBLE_EQ(var(tensor({1.0, 2.0, 3.0, 4.0}, TensorOptions().dtype(kFloat64)), std::nullopt, std::optional<int64_t>(0)).item<double>(), 1.25);
}

INSTANTIATE_TEST_SUITE_P(Devices, LargeReductions, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
