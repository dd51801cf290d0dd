// The CPU kernels' memory paths that only large or oddly laid out tensors take: streamed stores
// for results larger than the last-level cache (Note [Streaming stores]), including an output
// that does not start on a 32-byte boundary, and the tiled transposing copy. Values are checked
// element by element against a plain loop.

#include <cstdint>
#include <vector>

#include "src/backends/cpu/streaming_store.h"
#include "tests/test_util.h"

namespace locus {
namespace {

// Elements in a float32 tensor larger than the last-level cache (so its stores stream).
int64_t streamed_floats() { return cpu::streaming_store_bytes() / 4 + 4099; }

TEST(StreamingStores, BinaryUnaryAndCopyIntoLargeResultsAreExact) {
  const int64_t n = streamed_floats();
  const Tensor a = arange(n, kFloat32) * 0.5 - 1000.0, b = full({n}, 3.0);
  const std::vector<float> av = a.to_vector<float>();
  const Tensor sum = a + b, rel = relu(a), copied = a.clone(), half = a.to(kBFloat16), dbl = a.to(kFloat64);
  const std::vector<float> s = sum.to_vector<float>(), r = rel.to_vector<float>(), c = copied.to_vector<float>();
  const std::vector<double> d = dbl.to_vector<double>();
  const std::vector<float> h = half.to(kFloat32).to_vector<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    wrong += s[i] != av[i] + 3.0f;
    wrong += r[i] != (av[i] < 0 ? 0.0f : av[i]);
    wrong += c[i] != av[i];
    wrong += d[i] != static_cast<double>(av[i]);
    wrong += h[i] != static_cast<float>(BFloat16(av[i]));
  }
  EXPECT_EQ(wrong, 0);
}

TEST(StreamingStores, AnOutputOffTheVectorBoundaryIsWrittenWhole) {
  const int64_t n = streamed_floats();
  Tensor big = full({n + 3}, -7.0);
  Tensor out = big.narrow(0, 1, n);  // starts 4 bytes past an aligned address
  const Tensor a = remainder(arange(n, kInt64), 4096).to(kFloat32);
  add_out(out, a, a);
  const std::vector<float> v = big.to_vector<float>();
  EXPECT_EQ(v[0], -7.0f);
  EXPECT_EQ(v[static_cast<size_t>(n + 1)], -7.0f);
  EXPECT_EQ(v[static_cast<size_t>(n + 2)], -7.0f);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += v[static_cast<size_t>(i + 1)] != 2.0f * static_cast<float>(i % 4096);
  EXPECT_EQ(wrong, 0);
}

TEST(StreamingStores, InPlaceOpsKeepOrdinaryStoresAndAreExact) {
  const int64_t n = streamed_floats();
  Tensor x = remainder(arange(n, kInt64), 1000).to(kFloat32) - 500.0;  // exact in float32
  x.relu_();
  const std::vector<float> v = x.to_vector<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += v[i] != std::max(0.0f, static_cast<float>(i % 1000 - 500));
  EXPECT_EQ(wrong, 0);
}

struct TransposeCase {
  int64_t rows, cols;
  DType from, to;
};

class TransposedCopy : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(TransposedCopy, MatchesAPlainLoop) {
  const TransposeCase c = GetParam();
  const Tensor m = (arange(c.rows * c.cols, kFloat64) * 0.25 - 100).to(c.from).reshape({c.rows, c.cols});
  const Tensor t = m.t().to(c.to).contiguous();
  ASSERT_TRUE(t.is_contiguous());
  ASSERT_EQ(t.shape(), (Shape{c.cols, c.rows}));
  const std::vector<double> src = testing::values(m), got = testing::values(t);
  const std::vector<double> conv = testing::values(m.to(c.to));
  int64_t wrong = 0;
  for (int64_t r = 0; r < c.cols; ++r)
    for (int64_t q = 0; q < c.rows; ++q) wrong += got[r * c.rows + q] != conv[q * c.cols + r];
  EXPECT_EQ(wrong, 0);
  (void)src;
}

INSTANTIATE_TEST_SUITE_P(Cases, TransposedCopy,
                         ::testing::Values(TransposeCase{64, 64, kFloat32, kFloat32}, TransposeCase{37, 91, kFloat32, kFloat32},
                                           TransposeCase{1000, 33, kInt32, kInt32}, TransposeCase{45, 70, kFloat64, kFloat64},
                                           TransposeCase{40, 40, kFloat32, kFloat64}, TransposeCase{50, 37, kBFloat16, kFloat32},
                                           TransposeCase{33, 65, kInt64, kFloat32}, TransposeCase{512, 512, kFloat32, kFloat32}),
                         [](const ::testing::TestParamInfo<TransposeCase>& info) { return "case" + std::to_string(info.index); });

}  // namespace
}  // namespace locus
