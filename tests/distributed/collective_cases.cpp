// The all-reduce expectations shared by the Gloo and MPI tests (collective_cases.h).

#include "tests/distributed/collective_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "locus/locus.h"
#include "tests/test_util.h"

namespace locus::testing {

void expect_all_reduce_every_op_and_dtype(distributed::ProcessGroup& g) {
  using distributed::ReduceOp;
  const int n = g.size();
  const double r = g.rank();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kInt16, kInt8, kUInt8}) {
    // rank r holds [r + 1, 2 - r, 3]
    auto make = [&] { return tensor({r + 1, 2 - r, 3.0}, kFloat64).to(dt); };
    Tensor sum = make(), mx = make(), mn = make(), prod = make();
    g.all_reduce(sum, ReduceOp::Sum)->wait();
    g.all_reduce(mx, ReduceOp::Max)->wait();
    g.all_reduce(mn, ReduceOp::Min)->wait();
    g.all_reduce(prod, ReduceOp::Product)->wait();
    std::vector<double> want_sum(3, 0), want_max(3, -1e9), want_min(3, 1e9), want_prod(3, 1);
    for (int k = 0; k < n; ++k) {
      const double v[3] = {k + 1.0, 2.0 - k, 3.0};
      for (int i = 0; i < 3; ++i) {
        want_sum[i] += v[i], want_prod[i] *= v[i];
        want_max[i] = std::max(want_max[i], v[i]), want_min[i] = std::min(want_min[i], v[i]);
      }
    }
    if (dt == kUInt8 && n > 2) continue;  // 2 - r is negative from rank 3 on: wraps, checked below
    EXPECT_EQ(values(sum), want_sum) << dtype_name(dt);
    EXPECT_EQ(values(mx), want_max) << dtype_name(dt);
    EXPECT_EQ(values(mn), want_min) << dtype_name(dt);
    EXPECT_EQ(values(prod), want_prod) << dtype_name(dt);
  }
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    Tensor avg = tensor({2.0 * r, 4.0}, kFloat64).to(dt);
    g.all_reduce(avg, ReduceOp::Avg)->wait();
    EXPECT_EQ(values(avg), (std::vector<double>{n - 1.0, 4.0})) << dtype_name(dt);
  }
  if (n == 2) {
    // float16 adds in float and rounds to half, as the kernels do: 2048 + 1 is 2048 in half.
    Tensor half = tensor({r == 0 ? 2048.0 : 1.0}, kFloat64).to(kFloat16);
    g.all_reduce(half)->wait();
    EXPECT_EQ(values(half)[0], 2048.0);
  }
  Tensor flags = tensor({r == 0, false, true});
  Tensor any = flags.clone(), all = flags.clone();
  g.all_reduce(any, ReduceOp::Sum)->wait();
  g.all_reduce(all, ReduceOp::Product)->wait();
  EXPECT_EQ(values(any), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(values(all), (std::vector<double>{0, 0, 1}));
  Tensor wrap = tensor({int64_t{255}}).to(kUInt8);
  g.all_reduce(wrap, ReduceOp::Sum)->wait();
  EXPECT_EQ(values(wrap)[0], static_cast<double>((255 * n) % 256));  // wraps like the kernels
  Tensor big = tensor({std::numeric_limits<int64_t>::max()});
  g.all_reduce(big, ReduceOp::Sum)->wait();
  const uint64_t want = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) * static_cast<uint64_t>(n);
  EXPECT_EQ(big.item<int64_t>(), static_cast<int64_t>(want));
  // NaN wins Min and Max, as torch.minimum.
  Tensor nan = tensor({r == 0 ? std::nan("") : 1.0});
  g.all_reduce(nan, ReduceOp::Max)->wait();
  EXPECT_TRUE(std::isnan(values(nan)[0]));
}

}  // namespace locus::testing
