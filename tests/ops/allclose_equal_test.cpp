// allclose and equal against torch 1.13's answers (torch.allclose / torch.equal, run by hand):
// infinities, NaN with and without equal_nan, broadcasting, dtypes, exact int64 comparison, the
// argument errors, the methods LibTorch programs call, every layout and the sim device.

#include <cstdint>
#include <limits>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_error;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Allclose, InfinitiesAndNaNAsPyTorch) {
  EXPECT_TRUE(allclose(tensor({kInf}), tensor({kInf})));    // torch: True
  EXPECT_FALSE(allclose(tensor({-kInf}), tensor({kInf})));  // False
  EXPECT_FALSE(allclose(tensor({1.0, kInf}), tensor({1.0, 1e38})));
  EXPECT_FALSE(allclose(tensor({kNaN}), tensor({kNaN})));                         // False
  EXPECT_TRUE(allclose(tensor({kNaN}), tensor({kNaN}), 1e-5, 1e-8, /*equal_nan=*/true));  // True
  EXPECT_FALSE(allclose(tensor({kNaN}), tensor({1.0}), 1e-5, 1e-8, true));
}

TEST(Allclose, TolerancesAsPyTorch) {
  // |a - b| <= atol + rtol * |b|, b being `other`: the test is not symmetric.
  EXPECT_TRUE(allclose(tensor({100.0}, kFloat64), tensor({100.001}, kFloat64), 1e-5, 0));
  EXPECT_FALSE(allclose(tensor({100.0}, kFloat64), tensor({100.002}, kFloat64), 1e-5, 0));
  EXPECT_TRUE(allclose(tensor({1.0, 1e10}, kFloat64), tensor({1.0 + 1e-6, 1e10 + 1e5}, kFloat64)));
  EXPECT_FALSE(allclose(tensor({1.0f, 1e10f}), tensor({1.0f + 1e-6f, 1e10f + 1e5f})));  // torch: False in float32
  EXPECT_TRUE(allclose(tensor({int64_t{1}, int64_t{2}}), tensor({int64_t{1}, int64_t{3}}), 1e-5, 1));
  EXPECT_TRUE(allclose(tensor({true}), tensor({true})));
  EXPECT_TRUE(allclose(empty({0}), empty({0})));
  // int64 past 2^53: equality is exact in the dtype, not through float64 (torch: False).
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_FALSE(allclose(tensor({big}), tensor({big - 1}), 0, 0));
  EXPECT_TRUE(allclose(tensor({big}), tensor({big}), 0, 0));
}

TEST(Allclose, BroadcastsAndRefusesWhatPyTorchRefuses) {
  EXPECT_TRUE(allclose(ones({3}), ones({1})));  // torch: True
  EXPECT_TRUE(allclose(ones({2, 3}), ones({3})));
  EXPECT_FALSE(allclose(ones({2, 3}), tensor({1.f, 1.f, 2.f})));
  expect_error<ShapeError>([] { allclose(ones({3}), ones({2})); },
                           "[locus::allclose] shapes [3] and [2] cannot be broadcast: dimension 0 is 3 in one and 2 in "
                           "the other (sizes must match or one must be 1)");
  expect_error<DTypeError>([] { allclose(ones({3}), ones({3}, kFloat64)); },
                           "[locus::allclose] float32 did not match float64");
  expect_error<ValueError>([] { allclose(ones({2}), ones({2}), -1); },
                           "[locus::allclose] rtol must be greater than or equal to zero, but got -1");
  expect_error<ValueError>([] { allclose(ones({2}), ones({2}), 1e-5, -1); },
                           "[locus::allclose] atol must be greater than or equal to zero, but got -1");
}

TEST(Equal, ValuesShapesAndDtypesAsPyTorch) {
  EXPECT_TRUE(equal(ones({3}), ones({3}, kFloat64)));  // torch 1.13: True, values compared
  EXPECT_TRUE(equal(tensor({int64_t{1}, int64_t{2}}), tensor({1.f, 2.f})));
  EXPECT_FALSE(equal(ones({3}), ones({1})));  // no broadcasting: False
  EXPECT_FALSE(equal(tensor({kNaN}), tensor({kNaN})));
  EXPECT_TRUE(equal(tensor({0.0}), tensor({-0.0})));
  EXPECT_TRUE(equal(empty({0, 2}), empty({0, 2})));
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_FALSE(equal(tensor({big}), tensor({big - 1})));  // exact, not through float64
}

TEST(AllcloseEqual, MethodsLayoutsAndDevices) {
  const Tensor a = arange(0, 12, 1, TensorOptions().dtype(kFloat32)).view({3, 4});
  const Tensor b = a.clone();
  EXPECT_TRUE(a.allclose(b));
  EXPECT_TRUE(a.equal(b));
  EXPECT_FALSE(a.equal(b + 1e-3));
  EXPECT_TRUE(a.allclose(b + 1e-3, 1e-5, 1e-2));
  // Transposed, stepped, expanded, offset and empty views compare by their elements.
  EXPECT_TRUE(equal(a.t(), a.t().contiguous()));
  EXPECT_TRUE(allclose(a.slice(1, 0, 4, 2), a.slice(1, 0, 4, 2).contiguous()));
  EXPECT_TRUE(equal(a[0].expand({3, 4}), a[0].unsqueeze(0).repeat({3, 1})));
  EXPECT_TRUE(equal(a.narrow(0, 1, 2), b.narrow(0, 1, 2)));
  EXPECT_FALSE(equal(a.t(), a.t().contiguous() * 2));
  EXPECT_TRUE(equal(a.narrow(0, 0, 0), b.narrow(0, 3, 0)));
  const Tensor s = a.to("sim:0");
  EXPECT_TRUE(s.allclose(b.to("sim:0")));
  EXPECT_TRUE(s.equal(b.to("sim:0")));
  EXPECT_FALSE(s.equal(b.to("sim:0") * 2));
}

}  // namespace
}  // namespace locus
