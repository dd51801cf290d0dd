// Shapes whose element count, byte size or strides overflow int64 are a ShapeError naming the
// shape, in every factory and view; a negative dimension names its index and value. Each of
// these was once accepted with numel or nbytes 0, and reading the tensor crashed.

#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

constexpr int64_t k2_32 = int64_t{1} << 32;

// The message of the ShapeError `f` throws, or a failure.
template <class F>
std::string shape_error(F&& f) {
  try {
    f();
  } catch (const ShapeError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong error type: ") + e.what();
  }
  return "no error";
}

TEST(ShapeOverflow, FactoriesRejectShapesWhoseSizeWraps) {
  EXPECT_EQ(shape_error([] { empty({k2_32, k2_32}); }),
            "[locus::empty] shape [4294967296, 4294967296] is too large: its element count or its size in bytes "
            "(4 per element) overflows int64");
  EXPECT_EQ(shape_error([] { empty({int64_t{1} << 61}, kFloat64); }),
            "[locus::empty] shape [2305843009213693952] is too large: its element count or its size in bytes "
            "(8 per element) overflows int64");
  // Empty, but its contiguous strides would still wrap.
  EXPECT_NE(shape_error([] { empty({int64_t{1} << 40, int64_t{1} << 40, 0}); }).find("is too large"), std::string::npos);
  EXPECT_NE(shape_error([] { zeros({k2_32, k2_32}); }).find("[locus::zeros] shape [4294967296, 4294967296]"), std::string::npos);
  EXPECT_NE(shape_error([] { ones({k2_32, k2_32}, kInt8); }).find("[locus::ones]"), std::string::npos);
  EXPECT_NE(shape_error([] { full({k2_32, k2_32}, 2.0); }).find("[locus::full]"), std::string::npos);
  EXPECT_NE(shape_error([] { rand({k2_32, k2_32}); }).find("[locus::rand]"), std::string::npos);
  EXPECT_NE(shape_error([] { randn({k2_32, k2_32}); }).find("[locus::randn]"), std::string::npos);
  EXPECT_NE(shape_error([] { randint(0, 5, {k2_32, k2_32}); }).find("[locus::randint]"), std::string::npos);
  EXPECT_NE(shape_error([] { tensor(std::vector<float>{}, Shape{k2_32, k2_32, 0}); }).find("[locus::tensor]"), std::string::npos);
  EXPECT_NE(shape_error([] { empty({k2_32, k2_32}, TensorOptions().device(Device("sim:0"))); }).find("is too large"),
            std::string::npos);
  EXPECT_THROW(arange(0.0, 1e30), ValueError);
  // Large but representable shapes are fine while empty.
  EXPECT_EQ(empty({0, k2_32}).numel(), 0);
}

TEST(ShapeOverflow, NegativeDimensionsNameTheirIndexAndValue) {
  EXPECT_EQ(shape_error([] { empty({2, -3}); }), "[locus::empty] negative dimension -3 at index 1 in shape [2, -3]");
  EXPECT_EQ(shape_error([] { zeros({-1}); }), "[locus::zeros] negative dimension -1 at index 0 in shape [-1]");
  float buffer[4] = {};
  EXPECT_EQ(shape_error([&] { from_blob(buffer, {2, -2}, kFloat32); }),
            "[locus::from_blob] negative dimension -2 at index 1 in shape [2, -2]");
  EXPECT_NE(shape_error([] { ones({1}).expand({-2}); }).find("negative dimension -2 at index 0"), std::string::npos);
  EXPECT_NE(shape_error([] { ones({3}).view({-2, 3}); }).find("negative dimension -2 at index 0"), std::string::npos);
}

TEST(ShapeOverflow, FromBlobChecksShapeAndStrides) {
  float buffer[4] = {};
  EXPECT_NE(shape_error([&] { from_blob(buffer, {k2_32, k2_32}, kFloat32); }).find("is too large"), std::string::npos);
  EXPECT_NE(shape_error([&] { from_blob(buffer, {2, 2}, kFloat32, {}, Shape{int64_t{1} << 62, 1}); }).find("int64"),
            std::string::npos);
  EXPECT_NE(shape_error([&] { from_blob(buffer, {2, 2}, kFloat32, {}, Shape{-2, 1}); }).find("negative stride"),
            std::string::npos);
  EXPECT_EQ(from_blob(buffer, {0, 3}, kFloat32).numel(), 0);
}

TEST(ShapeOverflow, ViewsOfEmptyTensorsRejectWrappingShapes) {
  const Tensor e = empty({0});
  EXPECT_NE(shape_error([&] { e.reshape({k2_32, k2_32, 0}); }).find("[locus::reshape] shape [4294967296, 4294967296, 0]"),
            std::string::npos);
  EXPECT_NE(shape_error([&] { e.view({k2_32, k2_32, 0}); }).find("[locus::view]"), std::string::npos);
  EXPECT_NE(shape_error([&] { e.view({k2_32, k2_32 + 1, -1}); }).find("[locus::view]"), std::string::npos);
  EXPECT_EQ(shape_error([&] { e.reshape({-1, 0}); }),
            "[locus::reshape] cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension "
            "size -1 can be any value and is ambiguous");
  EXPECT_NE(shape_error([] { ones({1, 1}).expand({int64_t{1} << 40, int64_t{1} << 40}); }).find("[locus::expand]"),
            std::string::npos);
  // What still works: a big but representable empty view, a huge slice step.
  EXPECT_EQ(e.reshape({k2_32, 0}).shape(), (Shape{k2_32, 0}));
  EXPECT_EQ(arange(10).slice(0, 3, std::nullopt, INT64_MAX).numel(), 1);
  EXPECT_EQ(arange(10).slice(0, 3, std::nullopt, INT64_MAX).item<int64_t>(), 3);
}

// Regression: `x.to(0)` compiled (0 is a null const char*) and dereferenced the null pointer.
TEST(DeviceFromNull, IsAValueErrorNotACrash) {
  const Tensor x = ones({2});
  const char* none = nullptr;
  try {
    (void)x.to(none);
    ADD_FAILURE() << "x.to(nullptr) did not throw";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "a device cannot be made from a null string");
  }
  EXPECT_EQ(x.sum().item<float>(), 2.f);  // and x is intact
}

}  // namespace
}  // namespace locus
