// scatter, scatter_add and index_add at the shapes that pick each of the CPU kernel's paths
// (Note [Deterministic scatters]): a 1-D scatter, whole rows, rows wider than one block, many
// outer slices in parallel; repeated indices in order; a bad index found after the others were
// applied still leaves the destination as it was. Against loops written here, on every device.

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

class ScatterPaths : public testing::OnEachDevice {};

// out[o, index[o, j, i], i] (+)= src[o, j, i] over j in order, for [outer, *, inner] layouts.
std::vector<double> reference(std::vector<double> out, const std::vector<double>& src, const std::vector<double>& index,
                              int64_t outer, int64_t in_dim, int64_t out_dim, int64_t inner, bool add, bool per_row) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < in_dim; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (o * in_dim + j) * inner + i;
        const auto k = static_cast<int64_t>(per_row ? index[static_cast<size_t>(j)] : index[static_cast<size_t>(at)]);
        double& d = out[static_cast<size_t>((o * out_dim + k) * inner + i)];
        d = add ? d + src[static_cast<size_t>(at)] : src[static_cast<size_t>(at)];
      }
  return out;
}

TEST_P(ScatterPaths, EveryLayoutMatchesTheLoop) {
  manual_seed(41);
  struct Case { int64_t outer, in_dim, out_dim, inner; };
  // 1-D; whole rows of 64; rows of 3000 (three blocks); 300 outer slices of 40.
  for (const Case c : {Case{1, 70000, 5000, 1}, Case{1, 20000, 300, 64}, Case{1, 40, 7, 3000}, Case{300, 20, 5, 40}}) {
    SCOPED_TRACE(std::to_string(c.outer) + "x" + std::to_string(c.in_dim) + "x" + std::to_string(c.inner));
    const TensorOptions f64 = TensorOptions().dtype(kFloat64);
    const Tensor self = randn({c.outer, c.out_dim, c.inner}, f64);
    const Tensor src = randn({c.outer, c.in_dim, c.inner}, f64);
    const Tensor index = randint(0, c.out_dim, {c.outer, c.in_dim, c.inner});
    const Tensor rows = randint(0, c.out_dim, {c.in_dim});
    for (const bool add : {false, true}) {
      const Tensor got = add ? self.to(dev()).scatter_add(1, index.to(dev()), src.to(dev()))
                             : self.to(dev()).scatter(1, index.to(dev()), src.to(dev()));
      const std::vector<double> want =
          reference(values(self), values(src), values(index), c.outer, c.in_dim, c.out_dim, c.inner, add, false);
      // The CPU and sim add repeats in index order and keep the last of repeated writes, exactly;
      // cuda adds with atomics, in any order (rounding apart), and keeps any write (docs/design.md).
      if (!dev().is_cuda()) ASSERT_EQ(values(got), want);
      else if (add) testing::expect_close(got, want, 1e-12, 1e-12);
    }
    const Tensor summed = self.to(dev()).index_add(1, rows.to(dev()), src.to(dev()));
    testing::expect_close(summed, reference(values(self), values(src), values(rows), c.outer, c.in_dim, c.out_dim, c.inner,
                                            true, true), 1e-12, 1e-12);
  }
}

TEST_P(ScatterPaths, ABadIndexLeavesTheDestinationAsItWas) {
  if (dev().is_cuda()) GTEST_SKIP() << "cuda checks indices on the device and raises later (Note [Deferred checks])";
  manual_seed(42);
  Tensor x = randn({4, 100}).to(dev());
  const std::vector<double> before = values(x);
  Tensor index = randint(0, 4, {6, 100});
  index.index_put_({5, 99}, 4);  // the very last index is out of range
  EXPECT_THROW(x.scatter_add_(0, index.to(dev()), ones({6, 100}).to(dev())), IndexError);
  EXPECT_THROW(x.index_add_(1, tensor({0, 100, 2}).to(dev()), ones({4, 3}).to(dev())), IndexError);
  EXPECT_EQ(values(x), before);
}

INSTANTIATE_TEST_SUITE_P(Devices, ScatterPaths, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
