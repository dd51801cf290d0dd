// sort and topk at the sizes that pick each of the CPU kernel's paths (Note [CPU sort keys]):
// short rows (comparison sort), long rows (radix passes), float64 and int64 (pairs), a top-k
// small enough for a heap, one long row split across threads, a top-k too large for a heap;
// against std::stable_sort of the values with NaN last, on every device. Ties, -0.0 and NaN
// are planted in every row so the stable order is what is checked.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/test_util.h"

namespace locus {
namespace {

class SortPaths : public testing::OnEachDevice {
 protected:
  // rows x n values with repeats, -0.0/0.0 and NaN, in `dtype`.
  static Tensor planted(int64_t rows, int64_t n, DType dtype) {
    Tensor x = randint(-20, 20, {rows, n}).to(kFloat64);
    if (dtype == kFloat32 || dtype == kFloat64 || dtype == kFloat16 || dtype == kBFloat16) {
      x = x * 0.5;
      for (int64_t r = 0; r < rows; ++r) {
        x.index_put_({r, (r * 7) % n}, NAN);
        x.index_put_({r, (r * 11 + 3) % n}, -0.0);
        x.index_put_({r, (r * 13 + 5) % n}, INFINITY);
        x.index_put_({r, (r * 17 + 1) % n}, -INFINITY);
      }
    }
    return x.to(dtype);
  }

  // The stable order of each row: positions sorted by value (NaN last, -0.0 equal to 0.0).
  static std::vector<int64_t> reference(const std::vector<double>& v, int64_t rows, int64_t n, bool descending) {
    std::vector<int64_t> out;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> p(static_cast<size_t>(n));
      std::iota(p.begin(), p.end(), int64_t{0});
      const double* row = v.data() + r * n;
      const auto less = [](double a, double b) { return std::isnan(a) ? false : (std::isnan(b) ? true : a < b); };
      std::stable_sort(p.begin(), p.end(), [&](int64_t i, int64_t j) {
        return descending ? less(row[j], row[i]) : less(row[i], row[j]);
      });
      out.insert(out.end(), p.begin(), p.end());
    }
    return out;
  }

  void check(int64_t rows, int64_t n, int64_t k, DType dtype, bool descending) const {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(n) + " k=" + std::to_string(k) + " " +
                 std::string(dtype_name(dtype)) + (descending ? " descending" : ""));
    const Tensor x = planted(rows, n, dtype);
    const std::vector<double> v = testing::values(x);
    const std::vector<int64_t> order = reference(v, rows, n, descending);
    const auto [values, indices] = k == n ? sort(x.to(dev()), 1, descending) : topk(x.to(dev()), k, 1, /*largest=*/descending);
    const std::vector<double> got_i = testing::values(indices), got_v = testing::values(values);
    ASSERT_EQ(got_i.size(), static_cast<size_t>(rows * k));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j) {
        const auto at = static_cast<size_t>(r * k + j);
        const int64_t want = order[static_cast<size_t>(r * n + j)];
        ASSERT_EQ(static_cast<int64_t>(got_i[at]), want) << "row " << r << " rank " << j;
        const double w = v[static_cast<size_t>(r * n + want)];
        if (std::isnan(w)) EXPECT_TRUE(std::isnan(got_v[at]));
        else EXPECT_EQ(std::signbit(got_v[at]), std::signbit(w)) << "the value comes back bit for bit";
      }
  }
};

TEST_P(SortPaths, FullSortsMatchTheStableOrder) {
  manual_seed(31);
  for (DType dt : {kFloat32, kFloat64, kInt64, kInt32, kInt8, kFloat16, kBFloat16})
    for (bool descending : {false, true}) {
      check(3, 100, 100, dt, descending);    // comparison sort
      check(3, 2000, 2000, dt, descending);  // radix passes (or pairs for 64-bit keys)
    }
  check(64, 4096, 4096, kFloat32, false);  // rows in parallel
}

TEST_P(SortPaths, TopkMatchesTheStableSortsPrefix) {
  manual_seed(32);
  for (DType dt : {kFloat32, kFloat64, kInt32})
    for (bool descending : {false, true}) {
      check(4, 1000, 10, dt, descending);   // heap
      check(4, 1000, 400, dt, descending);  // partial sort
      check(1, 200000, 50, dt, descending);  // one long row: a heap per thread, merged
    }
}

INSTANTIATE_TEST_SUITE_P(Devices, SortPaths, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
