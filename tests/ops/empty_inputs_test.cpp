// Empty and 0-dim inputs for every op family: no crash, and PyTorch's result or PyTorch's error
// (the expected values below were read off torch 1.13 on the CPU).

#include <cmath>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

class EmptyInputs : public testing::OnEachDevice {
 protected:
  TensorOptions on(DType dtype = kFloat32) const { return TensorOptions().dtype(dtype).device(dev()); }
};

bool all_nan(const Tensor& t) {
  for (double v : values(t))
    if (!std::isnan(v)) return false;
  return true;
}

// Regression: the CPU reduce kernel divided by the length of an empty innermost dim (SIGFPE).
TEST_P(EmptyInputs, SumAndMeanOfEmptyTensorsDoNotCrash) {
  testing::MemoryBaseline baseline(dev());
  EXPECT_EQ(zeros({0}, on()).sum().item<float>(), 0.f);
  EXPECT_TRUE(std::isnan(zeros({0}, on()).mean().item<float>()));
  EXPECT_EQ(zeros({0}, on(kInt64)).sum().item<int64_t>(), 0);
  EXPECT_EQ(zeros({0, 3}, on(kBool)).sum().item<int64_t>(), 0);
  EXPECT_EQ(zeros({0, 3}, on(kBool)).sum().dtype(), kInt64);
  EXPECT_EQ(zeros({0}, on(kUInt8)).sum().item<int64_t>(), 0);
  const Tensor e03 = zeros({0, 3}, on());
  EXPECT_EQ(values(e03.sum(Shape{0})), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(all_nan(e03.mean(Shape{0})));
  EXPECT_EQ(e03.mean(Shape{0}).numel(), 3);
  EXPECT_EQ(e03.sum(Shape{1}).shape(), (Shape{0}));
  EXPECT_EQ(e03.sum(Shape{1}, true).shape(), (Shape{0, 1}));
  const Tensor e30 = zeros({3, 0}, on());
  EXPECT_EQ(values(e30.sum(Shape{1})), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(all_nan(e30.mean(Shape{1})));
  EXPECT_EQ(values(zeros({3, 0}, on(kInt32)).sum(Shape{1})), (std::vector<double>{0, 0, 0}));
  EXPECT_THROW(zeros({0}, on(kInt64)).mean(), DTypeError);
}

TEST_P(EmptyInputs, MaxMinArgmaxFollowPyTorch) {
  const Tensor e03 = zeros({0, 3}, on());
  for (const Tensor& e : {zeros({0}, on()), e03}) {
    EXPECT_THROW(e.max(), IndexError);
    EXPECT_THROW(e.min(), IndexError);
    EXPECT_THROW(e.argmax(), IndexError);
  }
  try {
    e03.max(0);
    ADD_FAILURE() << "max over an empty dim did not throw";
  } catch (const IndexError& err) {
    EXPECT_STREQ(err.what(), "[locus::max] expected reduction dim 0 to have non-zero size");
  }
  EXPECT_THROW(zeros({3, 0}, on()).argmax(1), IndexError);
  auto [v, i] = e03.max(1);
  EXPECT_EQ(v.shape(), (Shape{0}));
  EXPECT_EQ(i.shape(), (Shape{0}));
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(zeros({3, 0}, on()).argmax(0).shape(), (Shape{0}));
  EXPECT_EQ(zeros({0, 3}, on(kInt64)).min(1, true).values.shape(), (Shape{0, 1}));
}

TEST_P(EmptyInputs, ZeroDimTensorsReduceToThemselves) {
  const Tensor s = full({}, 3.0, on());
  EXPECT_EQ(s.sum().item<float>(), 3.f);
  EXPECT_EQ(s.sum(Shape{0}).item<float>(), 3.f);
  EXPECT_EQ(s.mean().item<float>(), 3.f);
  EXPECT_EQ(s.max().item<float>(), 3.f);
  EXPECT_EQ(s.argmax().item<int64_t>(), 0);
  EXPECT_EQ(s.argmax(0).item<int64_t>(), 0);
  auto [v, i] = s.max(0);
  EXPECT_EQ(v.item<float>(), 3.f);
  EXPECT_EQ(i.item<int64_t>(), 0);
  EXPECT_EQ(softmax(s, 0).item<float>(), 1.f);
  EXPECT_EQ(log_softmax(s, 0).item<float>(), 0.f);
}

TEST_P(EmptyInputs, ElementwiseSoftmaxMatmulJoinsAndIndexing) {
  testing::MemoryBaseline baseline(dev());
  const Tensor e03 = zeros({0, 3}, on());
  EXPECT_EQ((e03 + ones({3}, on())).shape(), (Shape{0, 3}));
  EXPECT_EQ(relu(e03).shape(), (Shape{0, 3}));
  EXPECT_EQ(exp(zeros({0}, on())).shape(), (Shape{0}));
  EXPECT_EQ((e03 > 0).dtype(), kBool);
  EXPECT_EQ(where(zeros({0}, on()) > 0, zeros({0}, on()), zeros({0}, on())).shape(), (Shape{0}));
  EXPECT_EQ(softmax(e03, 1).shape(), (Shape{0, 3}));
  EXPECT_EQ(log_softmax(zeros({3, 0}, on()), 1).shape(), (Shape{3, 0}));
  EXPECT_EQ(matmul(e03, ones({3, 4}, on())).shape(), (Shape{0, 4}));
  EXPECT_EQ(values(matmul(ones({2, 0}, on()), ones({0, 3}, on()))), std::vector<double>(6, 0.0));
  EXPECT_EQ(matmul(zeros({0}, on()), zeros({0}, on())).item<float>(), 0.f);
  EXPECT_EQ(cat({e03, e03}).shape(), (Shape{0, 3}));
  EXPECT_EQ(values(cat({zeros({0}, on()), ones({2}, on())})), (std::vector<double>{1, 1}));
  EXPECT_EQ(stack({zeros({0}, on()), zeros({0}, on())}).shape(), (Shape{2, 0}));
  const Tensor no_index = zeros({0}, on(kInt64));
  EXPECT_EQ(index_select(ones({3, 2}, on()), 0, no_index).shape(), (Shape{0, 2}));
  EXPECT_EQ(index_select(e03, 1, tensor({0, 2}).to(dev())).shape(), (Shape{0, 2}));
  EXPECT_EQ(gather(e03, 1, zeros({0, 2}, on(kInt64))).shape(), (Shape{0, 2}));
  EXPECT_EQ(e03.to(kFloat16).to(Device("cpu")).shape(), (Shape{0, 3}));
  EXPECT_EQ(e03.t().contiguous().shape(), (Shape{3, 0}));
  EXPECT_EQ(rand({0, 5}, on()).numel(), 0);
  EXPECT_EQ(arange(0, on(kInt64)).numel(), 0);
}

TEST_P(EmptyInputs, LossesOfEmptyBatchesAreNaN) {
  EXPECT_TRUE(std::isnan(locus::mse_loss(zeros({0}, on()), zeros({0}, on())).item<float>()));
  EXPECT_TRUE(std::isnan(nn::functional::cross_entropy(zeros({0, 3}, on()), zeros({0}, on(kInt64))).item<float>()));
}

INSTANTIATE_TEST_SUITE_P(Devices, EmptyInputs, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
