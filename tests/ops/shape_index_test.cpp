// Shape ops, masks, scatters and tensor indexing on every device, against hand-computed
// values (PyTorch's are in the golden family shapes_more).

#include <string>

#include "tests/test_util.h"

namespace locus {
namespace {

using namespace locus::indexing;
using testing::expect_close;
using testing::values;
namespace F = nn::functional;

class ShapeIndex : public testing::OnEachDevice {
 protected:
  // [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] as float32 on the device.
  Tensor grid() const { return arange(12, TensorOptions().dtype(kFloat32)).view({3, 4}).to(dev()); }
  Tensor longs(std::vector<int64_t> v, Shape shape = {}) const {
    Tensor t = tensor(v);
    return (shape.size() ? t.view(shape) : t).to(dev());
  }
  // An index out of bounds is an IndexError on every device. Host-readable devices raise it at
  // once with PyTorch's words (`host_words`); cuda checks on the device without waiting and
  // raises at the next synchronization (Note [Deferred checks]), in its own words.
  template <class F>
  void expect_out_of_bounds(F&& f, const std::string& host_words, const std::string& cuda_words) const {
    try {
      (void)f();
      if (dev().is_cuda()) synchronize(dev());
      FAIL() << "no error";
    } catch (const IndexError& e) {
      const std::string& words = dev().is_cuda() ? cuda_words : host_words;
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
};

TEST_P(ShapeIndex, SplitsAreViews) {
  Tensor x = grid();
  const auto parts = x.chunk(3, 1);
  ASSERT_EQ(parts.size(), 2u);  // ceil(4 / 3) = 2 per piece: two pieces, as PyTorch
  EXPECT_EQ(parts[0].shape(), (Shape{3, 2}));
  EXPECT_TRUE(parts[1].shares_storage(x));
  const auto sized = split(x, std::vector<int64_t>{1, 2}, 0);
  expect_close(sized[1], {4, 5, 6, 7, 8, 9, 10, 11});
  EXPECT_THROW(split(x, std::vector<int64_t>{1, 1}, 0), ValueError);
  const auto rows = x.unbind(-1);
  ASSERT_EQ(rows.size(), 4u);
  expect_close(rows[3], {3, 7, 11});
  EXPECT_EQ(chunk(zeros({0}).to(dev()), 3).size(), 3u);
}

TEST_P(ShapeIndex, CopiesOfShapes) {
  const Tensor x = grid();
  expect_close(tensor({1.0, 2.0}).to(dev()).repeat({2, 2}), {1, 2, 1, 2, 1, 2, 1, 2});
  expect_close(tensor({1.0, 2.0}).to(dev()).repeat_interleave(2), {1, 1, 2, 2});
  expect_close(repeat_interleave(tensor({1.0, 2.0}).to(dev()), longs({0, 3}), 0), {2, 2, 2});
  expect_close(x.flip({0, 1}).index({0}), {11, 10, 9, 8});
  expect_close(x.roll({1}, {1}).index({0}), {3, 0, 1, 2});
  expect_close(x.roll({-1}), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0});
  expect_close(x.tril(), {0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0});
  expect_close(x.triu(1), {0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11});
  expect_close(x.diag(1), {1, 6, 11});
  expect_close(tensor({1.0, 2.0}).to(dev()).diag(-1), {0, 0, 0, 1, 0, 0, 0, 2, 0});
  EXPECT_FALSE(x.flip({0}).shares_storage(x));
}

TEST_P(ShapeIndex, ViewsOfShapes) {
  Tensor x = grid();
  Tensor d = x.diagonal(1);
  expect_close(d, {1, 6, 11});
  d.fill_(-1);  // a view: writes reach x
  expect_close(x.index({0}), {0, -1, 2, 3});
  EXPECT_EQ(x.movedim(0, 1).shape(), (Shape{4, 3}));
  EXPECT_EQ(zeros({2, 3, 4}).movedim({0, 1}, {2, 0}).shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(x.swapaxes(0, 1).stride(0), 1);
  EXPECT_EQ(x.unflatten(1, {2, -1}).shape(), (Shape{3, 2, 2}));
  EXPECT_THROW(x.unflatten(1, {3, -1}), ValueError);
  const auto g = meshgrid({tensor({1, 2, 3}), tensor({4, 5})}, "xy");
  EXPECT_EQ(g[0].shape(), (Shape{2, 3}));
  expect_close(g[1], {4, 4, 4, 5, 5, 5});
  EXPECT_EQ(x.expand_as(zeros({2, 3, 4})).shape(), (Shape{2, 3, 4}));
}

TEST_P(ShapeIndex, Masks) {
  const Tensor x = grid();
  const Tensor m = x.gt(8);
  expect_close(x.masked_fill(m, -1.0).index({2}), {8, -1, -1, -1});
  expect_close(x.masked_select(m), {9, 10, 11});
  expect_close(x.masked_scatter(m, tensor({-1.0, -2.0, -3.0, -4.0}).to(dev())).index({2}), {8, -1, -2, -3});
  EXPECT_THROW(x.masked_scatter(m, tensor({1.0}).to(dev())), ValueError);
  EXPECT_THROW(x.masked_fill(x, 1.0), DTypeError);
  EXPECT_THROW(x.masked_fill(m, tensor({1.0, 2.0})), ShapeError);
}

TEST_P(ShapeIndex, ScattersAddRepeatsInOrder) {
  const Tensor z = zeros({3}).to(dev());
  const Tensor idx = longs({0, 2, 0, 0});
  expect_close(z.scatter_add(0, idx, tensor({1.0, 2.0, 3.0, 4.0}).to(dev())), {8, 0, 2});
  expect_close(z.index_add(0, idx, tensor({1.0, 2.0, 3.0, 4.0}).to(dev()), 0.5), {4, 0, 1});
  expect_close(z.scatter(0, longs({1}), 5.0), {0, 5, 0});
  expect_close(zeros({2, 3}).to(dev()).scatter(1, longs({2, 0}, {2, 1}), tensor({{1.0}, {2.0}}).to(dev())), {0, 0, 1, 2, 0, 0});
  expect_out_of_bounds([&] { return z.scatter(0, longs({5}), 1.0); }, "index 5 is out of bounds for dimension 0 with size 3",
                       "[locus::scatter] index 5 is out of bounds for dimension of size 3");
  expect_close(grid().take_along_dim(longs({3, 0, 1}, {3, 1}), 1), {3, 4, 9});
}

TEST_P(ShapeIndex, BasicIndexingGivesViews) {
  Tensor x = grid();
  Tensor col = x.index({Slice(), 0});
  expect_close(col, {0, 4, 8});
  EXPECT_TRUE(col.shares_storage(x));
  expect_close(x.index({"...", Slice(1, None, 2)}), {1, 3, 5, 7, 9, 11});
  EXPECT_EQ(x.index({None, Slice(), None}).shape(), (Shape{1, 3, 1, 4}));
  EXPECT_EQ(x.index({Ellipsis, None}).shape(), (Shape{3, 4, 1}));
  try {
    (void)x.index({5});
    FAIL() << "no error";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index 5 is out of bounds for dimension 0 with size 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(x.index({0, 0, 0}), IndexError);
  EXPECT_THROW(x.index({"..", 0}), ValueError);
}

TEST_P(ShapeIndex, AdvancedIndexingGathers) {
  const Tensor x = grid();
  expect_close(x.index({x.gt(9)}), {10, 11});
  expect_close(x.index({longs({2, -3})}), {8, 9, 10, 11, 0, 1, 2, 3});
  // Two index tensors broadcast together: x[[[0], [2]], [1, 3]] is [[1, 3], [9, 11]].
  expect_close(x.index({longs({0, 2}, {2, 1}), longs({1, 3})}), {1, 3, 9, 11});
  // Adjacent advanced dims stay in place; separated ones go first (PyTorch's rule).
  const Tensor y = zeros({2, 3, 4, 5}).to(dev());
  EXPECT_EQ(y.index({Slice(), longs({0, 1}), longs({0, 1})}).shape(), (Shape{2, 2, 5}));
  EXPECT_EQ(y.index({Slice(), longs({0, 1}), Slice(), longs({0, 1})}).shape(), (Shape{2, 2, 4}));
  expect_out_of_bounds([&] { return x.index({longs({3})}); }, "index 3 is out of bounds for dimension 0 with size 3",
                       "[locus::index] index 3 is out of bounds for dimension of size 3");
  EXPECT_THROW(x.index({x.gt(1).index({0})}), IndexError);  // a mask of the wrong shape
}

TEST_P(ShapeIndex, IndexPut) {
  Tensor x = grid();
  x.index_put_({Slice(), 0}, -1.0);
  expect_close(x.index({Slice(), 0}), {-1, -1, -1});
  x.index_put_({x.lt(0)}, tensor({7.0, 8.0, 9.0}).to(dev()));
  expect_close(x.index({Slice(), 0}), {7, 8, 9});
  Tensor z = zeros({3}).to(dev());
  z.index_put_({longs({0, 0, 2})}, tensor({1.0, 2.0, 3.0}).to(dev()), true);
  expect_close(z, {3, 0, 3});
  EXPECT_THROW(z.index_put_({longs({0})}, tensor({1.0, 2.0}).to(dev())), ShapeError);
}

TEST_P(ShapeIndex, PadAndOneHot) {
  const Tensor x = tensor({{1.0, 2.0, 3.0}}).to(dev());
  expect_close(F::pad(x, F::PadFuncOptions({2, 1}).mode(kReflect)), {3, 2, 1, 2, 3, 2});
  expect_close(F::pad(x, F::PadFuncOptions({1, 2}).mode(kReplicate)), {1, 1, 2, 3, 3, 3});
  expect_close(F::pad(x, F::PadFuncOptions({1, -1}).value(9)), {9, 1, 2});
  EXPECT_THROW(F::pad(x, F::PadFuncOptions({3, 0}).mode(kReflect)), ValueError);
  const Tensor h = F::one_hot(longs({2, 0}), 3);
  EXPECT_EQ(h.dtype(), kInt64);
  expect_close(h, {0, 0, 1, 1, 0, 0});
  EXPECT_THROW(F::one_hot(longs({3}), 3), ValueError);
}

TEST_P(ShapeIndex, Gradients) {
  const Tensor x = grid().to(kFloat64).requires_grad_();
  x.index({longs({0, 0, 2}), Slice(1, 3)}).sum().backward();
  expect_close(x.grad(), {0, 2, 2, 0, 0, 0, 0, 0, 0, 1, 1, 0});
  const Tensor s = tensor({1.0, 2.0, 3.0}, kFloat64).to(dev()).requires_grad_();
  zeros({2}, TensorOptions().dtype(kFloat64).device(dev())).scatter_add(0, longs({1, 1, 0}), s).mul(tensor({10.0, 1.0}, kFloat64).to(dev())).sum().backward();
  expect_close(s.grad(), {1, 1, 10});
}

INSTANTIATE_TEST_SUITE_P(Devices, ShapeIndex, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// A sim device without the Index family's scatter kernels runs them on the CPU through the
// fallback policy, with the same results.
TEST(ShapeIndexFallback, ScattersWithoutKernels) {
  const sim::Config saved = sim::config();
  sim::Config lacking = saved;
  lacking.unsupported_ops = {"scatter_add", "index_add", "scatter"};
  sim::configure(lacking);
  const CpuFallback policy = cpu_fallback();
  set_cpu_fallback(CpuFallback::Silent);
  {
    const int64_t before = fallback_count("scatter_add");
    const Tensor z = zeros({3}).to("sim:0");
    const Tensor idx = tensor({0, 2, 0}).to("sim:0");
    const Tensor s = tensor({1.0, 2.0, 3.0}).to("sim:0");
    const Tensor r = z.scatter_add(0, idx, s);
    EXPECT_EQ(r.device(), Device("sim:0"));
    testing::expect_close(r, {4, 0, 2});
    EXPECT_EQ(fallback_count("scatter_add"), before + 1);
    testing::expect_close(z.index_add(0, idx, s, 2), {8, 0, 4});
    Tensor w = zeros({3}).to("sim:0");
    w.index_put_({idx}, s, true);  // index_put_ reaches the same front end
    testing::expect_close(w, {4, 0, 2});
  }
  set_cpu_fallback(policy);
  sim::configure(saved);
}

}  // namespace
}  // namespace locus
