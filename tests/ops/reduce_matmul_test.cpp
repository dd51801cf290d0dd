// Reductions, softmax, matmul, joins and indexing against float64 references.

#include <cmath>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::values;

class Numeric : public testing::OnEachDevice {};

TEST_P(Numeric, SumMeanAlongDims) {
  testing::MemoryBaseline baseline(dev());
  manual_seed(4);
  const Tensor x = randn({3, 4, 5}).to(dev());
  const auto v = values(x);
  double total = 0;
  for (double e : v) total += e;
  expect_close(x.sum(), {total}, 1e-5, 1e-5);
  expect_close(x.mean(), {total / 60}, 1e-5, 1e-5);
  std::vector<double> s1(15, 0.0), s02(4, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) s1[i * 5 + k] += v[(i * 4 + j) * 5 + k], s02[j] += v[(i * 4 + j) * 5 + k];
  expect_close(x.sum(Shape{1}), s1, 1e-5, 1e-5);
  EXPECT_EQ(x.sum(Shape{1}, true).shape(), (Shape{3, 1, 5}));
  expect_close(x.sum(Shape{0, -1}), s02, 1e-5, 1e-5);
  expect_close(x.permute({2, 0, 1}).sum(Shape{1, 2}), [&] {
    std::vector<double> r(5, 0.0);
    for (int i = 0; i < 60; ++i) r[i % 5] += v[i];
    return r;
  }(), 1e-5, 1e-5);
  EXPECT_EQ(tensor({1, 2, 3}).to(dev()).sum().dtype(), kInt64);
  EXPECT_EQ(tensor({true, true}).to(dev()).sum().item<int64_t>(), 2);
  EXPECT_THROW(tensor({1, 2}).to(dev()).mean(), DTypeError);
}

TEST_P(Numeric, LargeSumIsAccurate) {
  manual_seed(5);
  const Tensor x = rand({1 << 22}).to(dev());
  double total = 0;
  for (double e : values(x)) total += e;
  expect_close(x.sum(), {total}, 1e-6, 0);
}

TEST_P(Numeric, MaxMinArgmax) {
  const Tensor x = tensor({3.f, 9.f, 1.f, 9.f, -2.f, 4.f}, TensorOptions()).reshape({2, 3}).to(dev());
  EXPECT_EQ(x.max().item<float>(), 9.f);
  EXPECT_EQ(x.min().item<float>(), -2.f);
  EXPECT_EQ(x.argmax().item<int64_t>(), 1);  // first of equal maxima
  auto [v, i] = x.max(1);
  expect_close(v, {9, 9});
  expect_close(i, {1, 0});
  auto [mv, mi] = x.min(0, true);
  EXPECT_EQ(mv.shape(), (Shape{1, 3}));
  expect_close(mi, {0, 1, 0});
  expect_close(x.argmax(0), {1, 0, 1});
  const Tensor n = tensor({1.f, NAN, 3.f}).to(dev());
  EXPECT_TRUE(std::isnan(n.max().item<float>()));
  EXPECT_THROW(zeros({0}, dev()).max(), IndexError);
}

TEST_P(Numeric, SoftmaxIsStable) {
  const Tensor x = tensor({1000.f, 1001.f, 1002.f, -5.f, 0.f, 5.f}).reshape({2, 3}).to(dev());
  auto ref = [](std::vector<double> r) {
    double m = *std::max_element(r.begin(), r.end()), s = 0;
    for (double& e : r) s += std::exp(e - m);
    for (double& e : r) e = std::exp(e - m) / s;
    return r;
  };
  auto a = ref({1000, 1001, 1002}), b = ref({-5, 0, 5});
  a.insert(a.end(), b.begin(), b.end());
  expect_close(softmax(x, 1), a);
  std::vector<double> la;
  for (double e : a) la.push_back(std::log(e));
  expect_close(log_softmax(x, -1), la, 1e-5, 1e-5);
  expect_close(softmax(x, 0).sum(Shape{0}), {1, 1, 1});
}

TEST_P(Numeric, MatmulShapesAgainstFloat64) {
  manual_seed(6);
  for (DType d : {kFloat32, kFloat64, kFloat16, kInt64}) {
    const Tensor a = randint(-3, 4, {2, 3, 4}, TensorOptions().dtype(d)).to(dev());
    const Tensor b = randint(-3, 4, {4, 5}, TensorOptions().dtype(d)).to(dev());
    const auto va = values(a), vb = values(b);
    std::vector<double> r(30, 0.0);
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j)
          for (int k = 0; k < 4; ++k) r[(n * 3 + i) * 5 + j] += va[(n * 3 + i) * 4 + k] * vb[k * 5 + j];
    const Tensor c = matmul(a, b);
    EXPECT_EQ(c.shape(), (Shape{2, 3, 5}));
    expect_close(c, r, 1e-3, 1e-3);
  }
  const Tensor m = randn({64, 784}).to(dev()), w = randn({256, 784}).to(dev());
  const Tensor y = mm(m, w.t());  // transposed operand goes to BLAS without a copy
  const auto vm = values(m), vw = values(w), vy = values(y);
  for (int i = 0; i < 64; i += 13)
    for (int j = 0; j < 256; j += 37) {
      double s = 0;
      for (int k = 0; k < 784; ++k) s += vm[i * 784 + k] * vw[j * 784 + k];
      EXPECT_NEAR(vy[i * 256 + j], s, 1e-3);
    }
  expect_close(matmul(tensor({1.f, 2.f}).to(dev()), tensor({3.f, 4.f}).to(dev())), {11});
  EXPECT_THROW(mm(ones({2, 3}, dev()), ones({2, 3}, dev())), ShapeError);
}

TEST_P(Numeric, CatStackIndexSelectGather) {
  const Tensor a = arange(6).reshape({2, 3}).to(dev());
  const Tensor b = arange(6, 9).reshape({1, 3}).to(dev());
  expect_close(cat({a, b}, 0), {0, 1, 2, 3, 4, 5, 6, 7, 8});
  expect_close(stack({a, a}, 1).flatten(), {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  expect_close(index_select(a, 1, tensor({2, 0}).to(dev())), {2, 0, 5, 3});
  expect_close(gather(a, 1, tensor({0, 0, 2, 1}).reshape({2, 2}).to(dev())), {0, 0, 5, 4});
  // .cpu(): on cuda the check runs on the device and raises at the next synchronization.
  EXPECT_THROW(index_select(a, 1, tensor({3}).to(dev())).cpu(), IndexError);
  // Negative indices are errors, as in PyTorch, never wrapped around (issue 14).
  EXPECT_THROW(index_select(a, 1, tensor({-1}).to(dev())).cpu(), IndexError);
  EXPECT_THROW(gather(a, 1, tensor({0, -1, 2, 1}).reshape({2, 2}).to(dev())).cpu(), IndexError);
  EXPECT_THROW(cat({a, ones({2, 2}, dev())}, 0), ShapeError);
}

TEST_P(Numeric, ViewsShareMemory) {
  Tensor x = arange(12, TensorOptions().dtype(kFloat32)).to(dev());
  Tensor v = x.view({3, 4});
  v.select(1, 2).fill_(-1);
  expect_close(x.index({Slice(2, std::nullopt, 4)}), {-1, -1, -1});
  expect_close(v.index({1, Slice(1, 3)}), {5, -1});
  expect_close(v.t().contiguous().index({0}), {0, 4, 8});
  EXPECT_THROW(v.t().view({12}), ShapeError);
  EXPECT_EQ(v.t().reshape({12}).shape(), (Shape{12}));
  EXPECT_EQ(v.unsqueeze(0).squeeze().shape(), (Shape{3, 4}));
  EXPECT_EQ(ones({3, 1}, dev()).expand({2, 3, 4}).shape(), (Shape{2, 3, 4}));
  EXPECT_TRUE(v.narrow(0, 1, 2).shares_storage(x));
}

INSTANTIATE_TEST_SUITE_P(Devices, Numeric, ::testing::ValuesIn(testing::value_devices()),
                         testing::device_test_name);

}  // namespace
}  // namespace locus
