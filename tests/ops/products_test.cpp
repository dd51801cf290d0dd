// bmm, addmm, baddbmm, mv, dot, outer and einsum against float64 loops written here (the golden
// family replays PyTorch's values; these check the planning and the kernels' alpha/beta paths
// at sizes and layouts the golden cases do not reach).

#include <cmath>

#include "tests/expect_error.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

class Products : public testing::OnEachDevice {};

// C[b] = beta * S[b] + alpha * A[b] @ B[b], S broadcast over the batch ([m, n]).
std::vector<double> reference(const std::vector<double>& s, const std::vector<double>& a, const std::vector<double>& b,
                              int64_t batch, int64_t m, int64_t k, int64_t n, double beta, double alpha) {
  std::vector<double> c(static_cast<size_t>(batch * m * n));
  for (int64_t q = 0; q < batch; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += a[(q * m + i) * k + p] * b[(q * k + p) * n + j];
        c[(q * m + i) * n + j] = (beta == 0 ? 0 : beta * s[i * n + j]) + alpha * acc;
      }
  return c;
}

TEST_P(Products, AddmmScalesInOneCall) {
  manual_seed(11);
  for (DType dt : {kFloat32, kFloat64}) {
    const Tensor s = randn({33, 17}, TensorOptions().dtype(dt)).to(dev());
    const Tensor a = randn({33, 65}, TensorOptions().dtype(dt)).to(dev());
    const Tensor b = randn({65, 17}, TensorOptions().dtype(dt)).to(dev());
    for (auto [beta, alpha] : {std::pair{1.0, 1.0}, {0.5, -2.0}, {0.0, 3.0}, {2.0, 0.0}}) {
      const Tensor c = addmm(s, a, b, beta, alpha);
      EXPECT_EQ(c.dtype(), dt);
      expect_close(c, reference(values(s), values(a), values(b), 1, 33, 65, 17, beta, alpha), 1e-4, 1e-4);
    }
    // A transposed operand and a broadcast self row.
    const Tensor at = a.t().contiguous().t(), row = s.narrow(0, 0, 1);
    std::vector<double> rows;
    for (int i = 0; i < 33; ++i)
      for (double v : values(row)) rows.push_back(v);
    expect_close(addmm(row, at, b, 0.5, 1.5), reference(rows, values(a), values(b), 1, 33, 65, 17, 0.5, 1.5), 1e-4, 1e-4);
  }
}

TEST_P(Products, BetaZeroNeverReadsSelf) {
  const Tensor s = full({4, 3}, NAN).to(dev());
  const Tensor a = ones({4, 2}).to(dev()), b = ones({2, 3}).to(dev());
  expect_close(addmm(s, a, b, 0.0, 1.0), std::vector<double>(12, 2.0));
  expect_close(baddbmm(full({2, 4, 3}, INFINITY).to(dev()), ones({2, 4, 2}).to(dev()), ones({2, 2, 3}).to(dev()), 0.0, 0.5),
               std::vector<double>(24, 1.0));
  // k = 0: beta * self, and zeros when beta is 0 (self NaN).
  expect_close(addmm(ones({2, 3}).to(dev()), ones({2, 0}).to(dev()), ones({0, 3}).to(dev()), 2.5, 1.0),
               std::vector<double>(6, 2.5));
  expect_close(addmm(s.narrow(0, 0, 2), ones({2, 0}).to(dev()), ones({0, 3}).to(dev()), 0.0, 1.0), std::vector<double>(6, 0.0));
}

TEST_P(Products, BaddbmmBroadcastsSelf) {
  manual_seed(12);
  const Tensor s = randn({5, 4}).to(dev());
  const Tensor a = randn({3, 5, 6}).to(dev()), b = randn({3, 6, 4}).to(dev());
  const Tensor c = baddbmm(s, a, b, -1.0, 0.25);
  EXPECT_EQ(c.shape(), (Shape{3, 5, 4}));
  expect_close(c, reference(values(s), values(a), values(b), 3, 5, 6, 4, -1.0, 0.25), 1e-5, 1e-5);
  expect_close(bmm(a, b), reference({}, values(a), values(b), 3, 5, 6, 4, 0.0, 1.0), 1e-5, 1e-5);
}

TEST_P(Products, IntegerScalingTruncatesAsPyTorch) {
  const Tensor s = full({2, 2}, 3, TensorOptions().dtype(kInt64)).to(dev());
  // alpha 0.5 -> 0, beta 1.5 -> 1 for integer tensors.
  expect_close(addmm(s, s, s, 1.5, 0.5), {3, 3, 3, 3});
  expect_close(addmm(s, s, s, 2, 3), {60, 60, 60, 60});
  EXPECT_EQ(addmm(s, s, s).dtype(), kInt64);
}

TEST_P(Products, GradientsOfScaledProducts) {
  manual_seed(13);
  const Tensor s = randn({4}, TensorOptions().dtype(kFloat64)).to(dev()).requires_grad_();
  const Tensor a = randn({3, 5}, TensorOptions().dtype(kFloat64)).to(dev()).requires_grad_();
  const Tensor b = randn({5, 4}, TensorOptions().dtype(kFloat64)).to(dev()).requires_grad_();
  addmm(s, a, b, 0.5, 2.0).sum().backward();
  expect_close(s.grad(), std::vector<double>(4, 1.5), 1e-12, 1e-12);  // 0.5 per row, 3 rows
  // d/da = alpha * 1 @ b^T: each row is 2 * the row sums of b.
  std::vector<double> ga;
  const auto vb = values(b);
  for (int i = 0; i < 3; ++i)
    for (int p = 0; p < 5; ++p) ga.push_back(2.0 * (vb[p * 4] + vb[p * 4 + 1] + vb[p * 4 + 2] + vb[p * 4 + 3]));
  expect_close(a.grad(), ga, 1e-12, 1e-12);
}

TEST_P(Products, VectorProducts) {
  const Tensor m = arange(6, TensorOptions().dtype(kFloat32)).reshape({2, 3}).to(dev());
  const Tensor v = tensor({1.f, 2.f, 3.f}).to(dev());
  expect_close(mv(m, v), {8, 26});
  expect_close(m.mv(v), {8, 26});
  const Tensor d = dot(v, v);
  EXPECT_EQ(d.dim(), 0);
  expect_close(d, {14});
  const Tensor w = tensor({1.0, -1.0}, TensorOptions().dtype(kFloat64)).to(dev());
  expect_close(outer(v, w), {1, -1, 2, -2, 3, -3});
  EXPECT_EQ(outer(v, w).dtype(), kFloat64);  // promotes, as a multiply
  expect_close(v.ger(v).sum(), {36});
  EXPECT_THROW(dot(v, ones({4}).to(dev())), ShapeError);
  EXPECT_THROW(dot(v, ones({3}, TensorOptions().dtype(kFloat64)).to(dev())), DTypeError);
  EXPECT_THROW(mv(v, v), ShapeError);
  EXPECT_THROW(outer(m, v), ShapeError);
  EXPECT_THROW(bmm(m, m), ShapeError);
  EXPECT_THROW(bmm(ones({2, 2, 3}).to(dev()), ones({3, 3, 2}).to(dev())), ShapeError);
  EXPECT_THROW(addmm(ones({4}).to(dev()), ones({2, 3}).to(dev()), ones({3, 3}).to(dev())), Error);
}

// einsum equations against the loops they mean.
TEST_P(Products, EinsumPlansAsProducts) {
  manual_seed(14);
  const TensorOptions o = TensorOptions().dtype(kFloat64);
  const Tensor a = randn({2, 3, 4}, o).to(dev()), b = randn({2, 4, 5}, o).to(dev());
  expect_close(einsum("bij,bjk->bik", {a, b}), values(bmm(a, b)), 1e-12, 1e-12);
  expect_close(einsum("bij,bjk->bki", {a, b}), values(bmm(a, b).transpose(1, 2).permute({0, 2, 1}).transpose(1, 2)), 1e-12,
               1e-12);
  // A summed label shared by three operands, and one that only one operand has.
  const Tensor x = randn({3, 4}, o).to(dev()), y = randn({4, 2}, o).to(dev()), z = randn({4}, o).to(dev());
  const auto vx = values(x), vy = values(y), vz = values(z);
  std::vector<double> expected(3, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 2; ++k) expected[i] += vx[i * 4 + j] * vy[j * 2 + k] * vz[j];
  expect_close(einsum("ij,jk,j->i", {x, y, z}), expected, 1e-12, 1e-12);
  // Trace, diagonal and the implicit output's alphabetical order.
  const Tensor sq = randn({4, 4}, o).to(dev());
  const auto vs = values(sq);
  expect_close(einsum("ii", {sq}), {vs[0] + vs[5] + vs[10] + vs[15]}, 1e-12, 1e-12);
  expect_close(einsum("ii->i", {sq}), {vs[0], vs[5], vs[10], vs[15]}, 1e-12, 1e-12);
  expect_close(einsum("ba", {x}), values(x.t()), 1e-12, 1e-12);
  // Ellipsis broadcasting: [2, 1, 3, 4] with [5, 4, 2] batch-broadcast to [2, 5, 3, 2].
  const Tensor e1 = randn({2, 1, 3, 4}, o).to(dev()), e2 = randn({5, 4, 2}, o).to(dev());
  const Tensor r = einsum("...ij,...jk", {e1, e2});
  EXPECT_EQ(r.shape(), (Shape{2, 5, 3, 2}));
  expect_close(r, values(matmul(e1, e2)), 1e-12, 1e-12);
}

TEST_P(Products, EinsumGradientsComeFromTheComposedOps) {
  manual_seed(15);
  const TensorOptions o = TensorOptions().dtype(kFloat64);
  const Tensor sq = randn({3, 3}, o).to(dev()).requires_grad_();
  einsum("ii->", {sq}).backward();
  expect_close(sq.grad(), {1, 0, 0, 0, 1, 0, 0, 0, 1});
  const Tensor a = randn({2, 3}, o).to(dev()).requires_grad_(), b = randn({3}, o).to(dev()).requires_grad_();
  einsum("ij,j->i", {a, b}).sum().backward();
  std::vector<double> ga;
  for (int i = 0; i < 2; ++i)
    for (double v : values(b)) ga.push_back(v);
  expect_close(a.grad(), ga, 1e-12, 1e-12);
  expect_close(b.grad(), values(a.detach().sum(0)), 1e-12, 1e-12);
}

TEST_P(Products, EinsumErrorsAsPyTorch) {
  const Tensor m = ones({2, 3}).to(dev());
  EXPECT_THROW(einsum("ij,jk", {m}), ValueError);              // fewer operands than the equation
  EXPECT_THROW(einsum("ij", {m, m}), ValueError);              // more operands
  EXPECT_THROW(einsum("ijk", {m}), ShapeError);                // subscript count
  EXPECT_THROW(einsum("i$", {m}), ValueError);                 // invalid subscript
  EXPECT_THROW(einsum("i.j", {m}), ValueError);                // a lone '.'
  EXPECT_THROW(einsum("ii", {m}), ShapeError);                 // repeated subscript, sizes differ
  EXPECT_THROW(einsum("ij,jk", {m, ones({2, 2}).to(dev())}), ShapeError);  // j: 3 vs 2
  EXPECT_THROW(einsum("ij->ii", {m}), ValueError);
  EXPECT_THROW(einsum("ij->k", {m}), ValueError);
  EXPECT_THROW(einsum("ij", {}), ValueError);
  try {
    einsum("ijk", {m});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("einsum(): the number of subscripts in the equation (3) does not match"),
              std::string::npos)
        << e.what();
  }
}

// mm_out as PyTorch's mm(out=): a non-contiguous out receives the values, another dtype or an
// input that requires grad is refused (Locus also refuses the wrong shape, which PyTorch resizes
// with a warning: docs/design.md).
TEST_P(Products, MmOutWritesAnyLayoutAndRefusesAsPyTorch) {
  manual_seed(12);
  const Tensor a = randn({3, 5}).to(dev()), b = randn({5, 4}).to(dev());
  const std::vector<double> expected = values(mm(a, b));
  Tensor out = empty({4, 3}).to(dev()).t();
  ASSERT_FALSE(out.is_contiguous());
  Tensor& r = mm_out(out, a, b);
  EXPECT_TRUE(r.is_same(out));
  expect_close(out, expected, 1e-6, 1e-6);
  Tensor dense = full({3, 4}, NAN).to(dev());
  mm_out(dense, a, b);
  expect_close(dense, expected, 1e-6, 1e-6);
  Tensor wrong_dtype = empty({3, 4}, kFloat64).to(dev());
  testing::expect_error<DTypeError>([&] { mm_out(wrong_dtype, a, b); },
                                    "[locus::mm] expected out tensor to have dtype float32, but got float64 instead");
  Tensor wrong_shape = empty({4, 4}).to(dev());
  testing::expect_error<ShapeError>([&] { mm_out(wrong_shape, a, b); },
                                    "[locus::mm] out has shape [4, 4], but the result has shape [3, 4]");
  const Tensor leaf = a.detach().requires_grad_();
  testing::expect_error<ValueError>([&] { mm_out(dense, leaf, b); },
                                    "[locus::mm] the out= form is not differentiable, and an input requires grad; use "
                                    "the out-of-place form");
  expect_close(dense, expected, 1e-6, 1e-6);  // untouched by the refusals
}

// A sim device without the product kernel: addmm and einsum run on the CPU through the
// fallback policy, with the same values and gradients.
TEST(ProductsFallback, ScaledProductOnADeviceLackingMatmul) {
  const sim::Config cfg = sim::config();
  sim::Config lacking = cfg;
  lacking.unsupported_ops = {"matmul"};
  sim::configure(lacking);
  const CpuFallback policy = cpu_fallback();
  {
    const Device sim0("sim:0");
    const TensorOptions o = TensorOptions().dtype(kFloat64);
    manual_seed(16);
    const Tensor s = randn({3}, o), a = randn({2, 4}, o), b = randn({4, 3}, o);
    set_cpu_fallback(CpuFallback::Error);
    EXPECT_THROW(addmm(s.to(sim0), a.to(sim0), b.to(sim0)), NotImplementedError);
    set_cpu_fallback(CpuFallback::Silent);
    const Tensor ss = s.to(sim0).requires_grad_(), as = a.to(sim0).requires_grad_();
    const Tensor c = addmm(ss, as, b.to(sim0), 0.5, 2.0);
    EXPECT_EQ(c.device(), sim0);
    expect_close(c, values(addmm(s, a, b, 0.5, 2.0)), 1e-12, 1e-12);
    c.sum().backward();
    expect_close(ss.grad(), {1, 1, 1}, 1e-12, 1e-12);
    expect_close(einsum("ij,jk->ik", {a.to(sim0), b.to(sim0)}), values(mm(a, b)), 1e-12, 1e-12);
  }
  set_cpu_fallback(policy);
  sim::configure(cfg);
}

INSTANTIATE_TEST_SUITE_P(Devices, Products, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
