// The spellings a PyTorch or LibTorch user types first: devices from integers, literals and
// the default dtype, item() into C++ numbers, tolist, aliases, options as keyword arguments.

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;

TEST(ApiSpellings, IntegersAreCudaDevices) {
  EXPECT_EQ(Device(0), Device("cuda:0"));
  EXPECT_EQ(Device(3), Device(kCUDA, 3));
  EXPECT_EQ(Device(kCPU), Device("cpu"));
  try {
    (void)Device(-1);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "Device index must not be negative, got -1");
  }
  const Tensor x = ones({2});
  if (!cuda::is_available()) {
    // As torch.ones(2).to(0) on a machine without CUDA: the CUDA backend's own error.
    EXPECT_THROW((void)x.to(0), BackendUnavailableError);
    EXPECT_THROW((void)x.cuda(0), BackendUnavailableError);
    EXPECT_THROW(DeviceGuard g(2), BackendUnavailableError);
  } else {
    EXPECT_EQ(x.to(0).device(), Device("cuda:0"));
    DeviceGuard g(0);
    EXPECT_EQ(cuda::current_device(), 0);
  }
  EXPECT_EQ(x.sum().item<float>(), 2.f);  // intact
}

TEST(ApiSpellings, LiteralsFollowPythonAndTheDefaultDtype) {
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), kFloat32);  // torch.tensor([1.0, 2.0])
  EXPECT_EQ(tensor(3.5).dtype(), kFloat32);
  EXPECT_EQ(tensor(3.5).dim(), 0);
  EXPECT_EQ(tensor({1, 2}).dtype(), kInt64);
  EXPECT_EQ(tensor({1, 2.5}).dtype(), kFloat32);  // mixed: the float wins
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(tensor({1.f}).dtype(), kFloat32);
  EXPECT_EQ(tensor({1.0}, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(tensor(std::vector<double>{1.0}).dtype(), kFloat64);  // a vector of doubles is data, as in LibTorch
  const Tensor nested = tensor({{{1.f, 2.f}, {3.f, 4.f}}, {{5.f, 6.f}, {7.f, 8.f}}});
  EXPECT_EQ(nested.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values(nested), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(tensor({int64_t{9007199254740993}}).item<int64_t>(), 9007199254740993);  // exact past 2^53
  try {
    (void)tensor({{1, 2}, {3}});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "tensor: expected sequence of length 2 at dim 1 (got 1)");  // PyTorch's wording
  }
  EXPECT_THROW((void)tensor({{1, 2}, 3}), ValueError);
  EXPECT_EQ(get_default_dtype(), kFloat32);
  set_default_dtype(kFloat64);
  EXPECT_EQ(tensor({1.0}).dtype(), kFloat64);
  EXPECT_EQ(zeros({2}).dtype(), kFloat64);
  EXPECT_EQ((tensor({1, 2}) / 2).dtype(), kFloat64);
  EXPECT_EQ((tensor({1, 2}) + 2.5).dtype(), kFloat64);
  EXPECT_EQ(tensor({1.f}).dtype(), kFloat32);
  set_default_dtype(kFloat32);
  try {
    set_default_dtype(kInt32);
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_STREQ(e.what(), "set_default_dtype: only floating-point types are supported as the default type, got int32");
  }
  EXPECT_EQ(get_default_dtype(), kFloat32);
}

TEST(ApiSpellings, ItemConvertsToCppNumbersAndTolistKeepsTheShape) {
  const Tensor loss = tensor(2.75);
  const float f = loss.item();
  const double d = loss.item();
  const int i = tensor(7).item();
  const bool b = tensor(true).item();
  EXPECT_EQ(f, 2.75f);
  EXPECT_EQ(d, 2.75);
  EXPECT_EQ(i, 7);
  EXPECT_TRUE(b);
  const Tensor t = tensor({{1.5, 2.5, 3.5}, {4.5, 5.5, 6.5}}).to(Device("sim:0")).requires_grad_();
  const HostValues<double> list = t.t().tolist<double>();
  EXPECT_EQ(list.shape, (Shape{3, 2}));
  EXPECT_EQ(list.values, (std::vector<double>{1.5, 4.5, 2.5, 5.5, 3.5, 6.5}));
  EXPECT_EQ(list.at({2, 1}), 6.5);
  EXPECT_EQ(list.at({-1, 0}), 3.5);
  EXPECT_THROW((void)list.at({3, 0}), IndexError);
  EXPECT_THROW((void)list.at({0}), IndexError);
  EXPECT_EQ(t.tolist<int64_t>().values, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(ApiSpellings, LibTorchNames) {
  const Tensor x = ones({2, 3}, TensorOptions().device(Device("sim:0")));
  EXPECT_EQ(x.sizes(), x.shape());
  const Tensor y = zeros({4}, x.options());
  EXPECT_EQ(y.device(), Device("sim:0"));
  EXPECT_EQ(y.dtype(), kFloat);
  EXPECT_EQ(x.half().dtype(), kHalf);
  EXPECT_EQ(x.bfloat16().dtype(), kBFloat16);
  EXPECT_EQ(x.double_().dtype(), kDouble);
  EXPECT_EQ(x.long_().dtype(), kLong);
  EXPECT_EQ(x.int_().dtype(), kInt);
  EXPECT_EQ(x.bool_().dtype(), kBool);
  EXPECT_EQ(x.half().float_().dtype(), kFloat32);
  EXPECT_EQ(kByte, kUInt8);
  EXPECT_EQ(kChar, kInt8);
  EXPECT_EQ(kShort, kInt16);
  const Tensor w = ones({2}).requires_grad_();
  {
    InferenceMode guard;
    EXPECT_FALSE((w * 2).requires_grad());
    {
      InferenceMode off(false);
      EXPECT_FALSE(is_grad_enabled());  // false leaves the mode as it was
    }
  }
  EXPECT_TRUE((w * 2).requires_grad());
}

// sort(x, 1) and argsort(x, 1, true) as a PyTorch user writes them: an int literal is the dim,
// a bool first is LibTorch's `stable`, with the dim after it.
TEST(ApiSpellings, SortTakesAnIntLiteralAsTheDim) {
  const Tensor x = tensor({{3.0, 1.0, 2.0}, {0.0, 5.0, 4.0}});
  EXPECT_EQ(values(sort(x, 1).values), (std::vector<double>{1, 2, 3, 0, 4, 5}));
  EXPECT_EQ(values(sort(x, 0).values), (std::vector<double>{0, 1, 2, 3, 5, 4}));
  EXPECT_EQ(values(sort(x, 1, true).indices), (std::vector<double>{0, 2, 1, 1, 2, 0}));
  EXPECT_EQ(values(sort(x, true, 0).values), (std::vector<double>{0, 1, 2, 3, 5, 4}));
  EXPECT_EQ(values(sort(x, false, 1, true).values), (std::vector<double>{3, 2, 1, 5, 4, 0}));
  EXPECT_EQ(values(argsort(x, 1)), (std::vector<double>{1, 2, 0, 0, 2, 1}));
  EXPECT_EQ(values(argsort(x, 1, true)), (std::vector<double>{0, 2, 1, 1, 2, 0}));
  EXPECT_EQ(values(argsort(x, true, 0)), (std::vector<double>{1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(values(x.argsort(0)), (std::vector<double>{1, 0, 0, 0, 1, 1}));
}

TEST(ApiSpellings, OptionsReadLikeKeywordArguments) {
  const auto o = optim::SGDOptions(0.1).nesterov(true).momentum(0.9);  // any order
  EXPECT_EQ(o.lr(), 0.1);
  EXPECT_EQ(o.momentum(), 0.9);
  EXPECT_TRUE(o.nesterov());
  const auto a = optim::AdamOptions().betas(0.8, 0.9).lr(0.5);
  EXPECT_EQ(a.beta1(), 0.8);
  EXPECT_EQ(a.beta2(), 0.9);
  EXPECT_EQ(a.lr(), 0.5);
  const Tensor p = ones({2}).requires_grad_();
  EXPECT_EQ(optim::SGD({p}, 0.25).options().lr(), 0.25);
  EXPECT_EQ(optim::Adam({p}, 0.5).options().lr(), 0.5);
  EXPECT_EQ(optim::AdamW({p}, 0.5).options().weight_decay(), 0.01);  // AdamW's default kept
  auto ds = std::make_shared<data::TensorDataset>(arange(10), arange(10));
  data::DataLoader by_size(ds, 4);
  EXPECT_EQ(by_size.size(), 3);
  data::DataLoader full(ds, data::DataLoaderOptions().shuffle(true).batch_size(4).drop_last(true));
  EXPECT_EQ(full.size(), 2);
  EXPECT_TRUE(full.options().shuffle());
  EXPECT_THROW(optim::SGD({}, 0.1), ValueError);
}

}  // namespace
}  // namespace locus
