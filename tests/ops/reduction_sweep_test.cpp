// Every reduction, every dtype, at sizes that cross each code path's thresholds, contiguous and
// strided, along dims and over all, against references computed element by element in int64 or
// float64 on the host. It guards against accumulating in the element type: bool, uint8 and int8
// sums once wrapped at 256 (ones(4096, kBool).sum() gave 16).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

class ReductionSweep : public testing::OnEachDevice {};

const DType kAllDtypes[] = {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64};

// 1, around 255/256 (an 8-bit accumulator's limit), the CPU's vector block (16 lanes x 256),
// the CPU's parallel threshold (256 KiB) for 1-, 4- and 8-byte elements and twice that,
// 2^16 + 1, and a few million.
const int64_t kSizes[] = {1, 255, 256, 257, 4096, 4097, 32768, 65537, 262144, 524288, 3000017};

// Element i of the sweep's input, exactly representable in `dtype`, with many ties for the
// extreme reductions and sums that overflow any accumulator narrower than int64.
double element(DType dtype, int64_t i) {
  switch (dtype) {
    case kBool: return i % 3 != 0;
    case kUInt8: return static_cast<double>((i * 37 + 11) % 256);
    case kInt8: return static_cast<double>((i * 37 + 11) % 256 - 128);
    case kInt16: return static_cast<double>((i * 7919) % 65536 - 32768);
    case kInt32: return static_cast<double>((i * 2654435761LL) % (int64_t{1} << 31) - (int64_t{1} << 30));
    case kInt64: return static_cast<double>((i * 1000003LL) % (int64_t{1} << 40) - (int64_t{1} << 39));
    case kFloat16:
    case kBFloat16: return static_cast<double>(i % 7) * 0.25;
    default: return static_cast<double>((i * 7919) % 1000) / 1000.0 - 0.3;
  }
}

Tensor sweep_input(DType dtype, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = element(dtype, i);
  return tensor(v).to(dtype);
}

// The input's elements read back exactly: integers as int64, floats as float64.
std::vector<int64_t> as_int64(const Tensor& t) { return t.detach().cpu().to(kInt64).contiguous().to_vector<int64_t>(); }

// What a float sum of `dtype` should print: the float64 total rounded to the result dtype.
double rounded_to(DType dtype, double v) { return values(tensor({v}, kFloat64).to(dtype))[0]; }

// Relative tolerance of a float sum: float32 accumulation over blocks, or the result dtype's
// rounding for half and bfloat16 (whose inputs here sum exactly in float).
double sum_rtol(DType dtype) {
  switch (dtype) {
    case kFloat64: return 1e-12;
    case kFloat32: return 2e-6;
    default: return 0;
  }
}

// |got - want| within tol, where an infinite want (a half sum past 65504) must be matched exactly.
::testing::AssertionResult near_or_same_inf(double got, double want, double tol) {
  if (std::isinf(want) ? got == want : std::abs(got - want) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (tolerance " << tol << ")";
}

// Checks sum (and mean for floats) of `x` (a 1-D tensor on the device under test) against the
// host elements `host`.
void check_full_sum(const Tensor& x, const Tensor& host, const std::string& what) {
  const DType dtype = host.dtype();
  if (is_floating_point(dtype)) {
    double total = 0, magnitude = 0;
    for (double e : values(host)) total += e, magnitude += std::abs(e);
    const Tensor s = x.sum();
    ASSERT_EQ(s.dtype(), dtype) << what;
    EXPECT_TRUE(near_or_same_inf(values(s)[0], rounded_to(dtype, total), sum_rtol(dtype) * magnitude + 1e-12)) << what;
    const double n = static_cast<double>(host.numel());
    const double mean_want = rounded_to(dtype, total / n);
    EXPECT_NEAR(values(x.mean())[0], mean_want, sum_rtol(dtype) * magnitude / n + 1e-12) << what << " mean";
  } else {
    int64_t total = 0;
    for (int64_t e : as_int64(host)) total += e;
    const Tensor s = x.sum();
    ASSERT_EQ(s.dtype(), kInt64) << what;
    EXPECT_EQ(s.item<int64_t>(), total) << what;
  }
}

// max, min, argmax and argmin over all elements (first index on ties), against the host
// elements (bool has max and min, not argmax and argmin, as in PyTorch).
void check_full_extremes(const Tensor& x, const Tensor& host, const std::string& what) {
  const std::vector<double> v = values(host);
  const auto hi = std::max_element(v.begin(), v.end());  // first of equal maxima
  const auto lo = std::min_element(v.begin(), v.end());
  EXPECT_EQ(values(x.max())[0], *hi) << what;
  EXPECT_EQ(values(x.min())[0], *lo) << what;
  if (host.dtype() == kBool) return;
  EXPECT_EQ(x.argmax().item<int64_t>(), hi - v.begin()) << what;
  EXPECT_EQ(x.argmin().item<int64_t>(), lo - v.begin()) << what;
}

TEST_P(ReductionSweep, FullReductionsEveryDtypeAndSize) {
  testing::MemoryBaseline baseline(dev());
  for (DType dtype : kAllDtypes) {
    for (int64_t n : kSizes) {
      const std::string what = std::string(dtype_name(dtype)) + " n=" + std::to_string(n);
      const Tensor host = sweep_input(dtype, n);
      const Tensor x = host.to(dev());
      check_full_sum(x, host, what);
      check_full_extremes(x, host, what);
      // Strided: every other element of a tensor twice as long.
      const Tensor host2 = sweep_input(dtype, 2 * n);
      const Tensor strided = host2.to(dev()).slice(0, 0, std::nullopt, 2);
      if (n > 1) ASSERT_FALSE(strided.is_contiguous());
      check_full_sum(strided, host2.slice(0, 0, std::nullopt, 2).contiguous(), what + " strided");
      check_full_extremes(strided, host2.slice(0, 0, std::nullopt, 2).contiguous(), what + " strided");
    }
  }
}

TEST_P(ReductionSweep, AlongDimsEveryDtype) {
  testing::MemoryBaseline baseline(dev());
  // [rows, cols] with the reduced dim inner (rows of a long run) and outer (columns kept).
  const std::pair<int64_t, int64_t> shapes[] = {{3, 257}, {5, 4097}, {2, 262145}, {70000, 3}, {300, 300}};
  for (DType dtype : kAllDtypes) {
    for (const auto& shape : shapes) {
      const int64_t rows = shape.first, cols = shape.second;  // clang 14: a lambda cannot capture a structured binding
      const std::string what = std::string(dtype_name(dtype)) + " [" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
      const Tensor host = sweep_input(dtype, rows * cols).reshape({rows, cols});
      const Tensor x = host.to(dev());
      const std::vector<int64_t> ints = as_int64(host);
      const std::vector<double> reals = values(host);
      for (int64_t dim : {0, 1}) {
        const int64_t outputs = dim == 0 ? cols : rows, length = dim == 0 ? rows : cols;
        auto at = [&](int64_t o, int64_t r) { return dim == 0 ? r * cols + o : o * cols + r; };
        const Tensor s = x.sum(Shape{dim});
        const auto [max_values, max_indices] = x.max(dim);
        ASSERT_EQ(s.numel(), outputs) << what;
        const std::vector<int64_t> got_idx = max_indices.cpu().to_vector<int64_t>();
        if (is_floating_point(dtype)) {
          const std::vector<double> got = values(s);
          for (int64_t o = 0; o < outputs; ++o) {
            double want = 0, magnitude = 0;
            for (int64_t r = 0; r < length; ++r) want += reals[at(o, r)], magnitude += std::abs(reals[at(o, r)]);
            ASSERT_TRUE(near_or_same_inf(got[o], rounded_to(dtype, want), sum_rtol(dtype) * magnitude + 1e-12))
                << what << " dim " << dim << " output " << o;
          }
        } else {
          const std::vector<int64_t> got = s.cpu().to_vector<int64_t>();
          for (int64_t o = 0; o < outputs; ++o) {
            int64_t want = 0;
            for (int64_t r = 0; r < length; ++r) want += ints[at(o, r)];
            ASSERT_EQ(got[o], want) << what << " dim " << dim << " output " << o;
          }
        }
        const std::vector<double> got_max = values(max_values);
        for (int64_t o = 0; o < outputs; ++o) {
          int64_t best = 0;
          for (int64_t r = 1; r < length; ++r)
            if (reals[at(o, r)] > reals[at(o, best)]) best = r;
          ASSERT_EQ(got_idx[o], best) << what << " max index dim " << dim << " output " << o;
          ASSERT_EQ(got_max[o], reals[at(o, best)]) << what << " max dim " << dim;
        }
      }
    }
  }
}

// The accuracy idiom of every training loop, at the sizes of the report.
TEST_P(ReductionSweep, CountingTrueElementsIsExact) {
  for (int64_t n : {255, 256, 4096, 10000, 1048576}) {
    for (DType dtype : {kBool, kUInt8, kInt8}) {
      EXPECT_EQ(ones({n}, TensorOptions().dtype(dtype).device(dev())).sum().item<int64_t>(), n)
          << dtype_name(dtype) << " n=" << n;
    }
    const Tensor pred = arange(n, TensorOptions().device(dev()));
    const Tensor target = pred.clone();
    EXPECT_EQ((pred == target).sum().item<int64_t>(), n) << "n=" << n;
    EXPECT_EQ((pred < n - 7).sum().item<int64_t>(), n - 7) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ReductionSweep, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
