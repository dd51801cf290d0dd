// float32 sigmoid and tanh on contiguous runs take the CPU's eight-lane rows (Note [Vectorised
// sigmoid and tanh], src/backends/cpu/vec_math.h): against float64 over a dense sweep, at the
// edges (NaN, infinities, signed zeros, subnormals, the ends of float32's exponential), and
// against the strided path, which keeps libm.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus {
namespace {

std::vector<float> sweep() {
  std::vector<float> v;
  for (int i = -200000; i <= 200000; ++i) v.push_back(static_cast<float>(i) * 5e-4f);  // [-100, 100]
  for (float x = 1e-30f; x < 1.0f; x *= 1.7f) v.push_back(x), v.push_back(-x);
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(),
                  -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(), 0.625f, -0.625f, 0.62499994f, 80.0f, -80.0f, 87.5f, -87.5f, 88.5f,
                  -88.5f, 89.0f, -89.0f, 103.0f, -103.0f, 110.0f, -110.0f})
    v.push_back(x);
  while (v.size() % 8 != 3) v.push_back(0.5f);  // a scalar tail after the vectors
  return v;
}

// |got - want| within `ulps` units in the last place of float32 at want (float32's smallest
// normal below it).
void expect_within_ulps(const std::vector<float>& x, const std::vector<float>& got, double (*want)(double), double ulps,
                        const char* name) {
  int bad = 0;
  for (size_t k = 0; k < x.size() && bad < 5; ++k) {
    const double w = want(static_cast<double>(x[k]));
    if (std::isnan(w)) {
      if (!std::isnan(got[k])) ++bad, ADD_FAILURE() << name << "(" << x[k] << ") = " << got[k] << ", want NaN";
      continue;
    }
    const float wf = static_cast<float>(w);
    // Below float32's smallest normal, libm's own 1 / (1 + expf(-x)) is 0 once expf overflows:
    // there the check is absolute.
    const double spacing = std::max<double>(std::nextafter(std::fabs(wf), std::numeric_limits<float>::infinity()) - std::fabs(wf),
                                            std::numeric_limits<float>::min() / ulps);
    if (std::fabs(static_cast<double>(got[k]) - w) > ulps * spacing || std::signbit(got[k]) != std::signbit(wf))
      ++bad, ADD_FAILURE() << name << "(" << x[k] << ") = " << got[k] << ", want " << w;
  }
}

double sigmoid64(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double tanh64(double x) { return std::tanh(x); }

TEST(VectorisedActivations, SigmoidAndTanhAgainstFloat64) {
  const std::vector<float> v = sweep();
  const Tensor x = tensor(v);
  expect_within_ulps(v, sigmoid(x).to_vector<float>(), sigmoid64, 4, "sigmoid");
  expect_within_ulps(v, locus::tanh(x).to_vector<float>(), tanh64, 4, "tanh");
}

// The strided path (libm) and the vector rows give the same values to a few ulps, and exactly
// where the rows hand lanes back to libm.
TEST(VectorisedActivations, ContiguousAndStridedAgree) {
  const std::vector<float> v = sweep();
  const auto n = static_cast<int64_t>(v.size());
  const Tensor x = tensor(v);
  const Tensor strided = stack({x, x}, 1).select(1, 0);  // stride 2
  ASSERT_FALSE(strided.is_contiguous());
  for (auto [name, f] : std::vector<std::pair<const char*, Tensor (*)(const Tensor&)>>{{"sigmoid", &sigmoid}, {"tanh", &locus::tanh}}) {
    const std::vector<float> a = f(x).to_vector<float>(), b = f(strided).contiguous().to_vector<float>();
    ASSERT_EQ(a.size(), static_cast<size_t>(n));
    int bad = 0;
    for (size_t k = 0; k < a.size() && bad < 5; ++k) {
      if (std::isnan(a[k]) && std::isnan(b[k])) continue;
      const float tol = 4 * (std::nextafter(std::fabs(b[k]), 1e30f) - std::fabs(b[k]));
      if (!(std::fabs(a[k] - b[k]) <= tol)) ++bad, ADD_FAILURE() << name << "(" << v[k] << "): " << a[k] << " vs " << b[k];
    }
  }
  // Beyond |x| = 80 sigmoid is libm's on both paths: 0, a subnormal or 1, bit for bit.
  for (float e : {-88.5f, -89.0f, -103.0f, 90.0f}) {
    const Tensor t = full({16}, e);
    EXPECT_EQ(sigmoid(t).to_vector<float>()[3], 1.0f / (1.0f + std::exp(-e))) << e;
  }
}

}  // namespace
}  // namespace locus
