// Issue 38's reports, kept as tests: a convolution's gradients must not depend on the layout of
// its operands, and no op writes into a tensor whose elements share memory. The fused kernel's backward used to read the forward's temporary contiguous copy
// of a transposed input after it was freed (Note [Kernel operands]); between the forward and the
// backward each test allocates and frees NaN-filled buffers of that copy's size, so that a
// backward reading freed memory reads NaN instead of the values it happened to leave behind.

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace locus {
namespace {

namespace F = nn::functional;

using LayoutRegression = testing::OnEachDevice;

// Recycles freed blocks of `like`'s size with NaN.
void scribble_over_freed(const Tensor& like) {
  for (int k = 0; k < 4; ++k) {
    Tensor junk = full(like.shape(), NAN, TensorOptions().dtype(like.dtype()).device(like.device()));
    (void)junk;
  }
}

// The gradients of `inputs` after conv(inputs).sum().backward(), with freed memory scribbled on
// between the forward and the backward.
std::vector<Tensor> gradients(const std::function<Tensor(const std::vector<Tensor>&)>& conv, std::vector<Tensor> inputs) {
  for (Tensor& t : inputs) t = t.detach().requires_grad_();
  const Tensor out = conv(inputs).sum();
  for (const Tensor& t : inputs) scribble_over_freed(t);
  out.backward();
  std::vector<Tensor> grads;
  for (const Tensor& t : inputs) grads.push_back(t.grad().cpu());
  return grads;
}

void expect_equal_gradients(const std::vector<Tensor>& strided, const std::vector<Tensor>& dense) {
  ASSERT_EQ(strided.size(), dense.size());
  for (size_t k = 0; k < dense.size(); ++k) {
    const std::vector<double> a = testing::values(strided[k]), b = testing::values(dense[k]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_FALSE(std::isnan(a[i])) << "gradient " << k << " element " << i << " is NaN: read freed memory";
      ASSERT_NEAR(a[i], b[i], 1e-4 * (1 + std::abs(b[i]))) << "gradient " << k << " element " << i;
    }
  }
}

TEST_P(LayoutRegression, Conv2dGradientsOfATransposedInput) {
  manual_seed(0);
  const Tensor x = randn({2, 6, 9, 3}).to(dev()).transpose(1, 3);  // [2, 3, 9, 6], not contiguous
  const Tensor w = randn({5, 3, 3, 2}).to(dev());
  const auto conv = [](const std::vector<Tensor>& in) {
    return F::conv2d(in[0], in[1], F::Conv2dFuncOptions().stride({2, 1}).padding({1, 0}).dilation({1, 2}));
  };
  for (int round = 0; round < 3; ++round)
    expect_equal_gradients(gradients(conv, {x, w}), gradients(conv, {x.contiguous(), w}));
}

TEST_P(LayoutRegression, GroupedStridedConv1dOfNonContiguousOperands) {
  manual_seed(1);
  const Tensor x = randn({2, 11, 4}).to(dev()).transpose(1, 2);     // [2, 4, 11]
  const Tensor w = randn({2, 6, 3}).to(dev()).transpose(0, 1);      // [6, 2, 3]
  const Tensor b = randn({12}).to(dev()).slice(0, 0, std::nullopt, 2);  // [6], stride 2
  const auto conv = [](const std::vector<Tensor>& in) {
    return F::conv1d(in[0], in[1], F::Conv1dFuncOptions().bias(in[2]).stride(2).padding(2).groups(2));
  };
  for (int round = 0; round < 3; ++round)
    expect_equal_gradients(gradients(conv, {x, w, b}), gradients(conv, {x.contiguous(), w.contiguous(), b.contiguous()}));
}

// Writing into a tensor two of whose elements share memory (expand's stride 0) has no defined
// result; PyTorch refuses it for the elementwise ops, their out= forms and copy_, and so does
// Locus, leaving the memory as it was. A strided view with one element per address is fine.
TEST_P(LayoutRegression, WritesIntoAnExpandedTensorAreRefused) {
  const Tensor base = zeros({1, 3}, TensorOptions().device(dev()));
  const Tensor expanded = base.expand({4, 3});
  const std::string message =
      "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
      "Please clone() the tensor before performing the operation.";
  const auto refuses = [&](const char* what, const std::function<void()>& write) {
    try {
      write();
      ADD_FAILURE() << what << " wrote into an expanded tensor";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << what << ": " << e.what();
    }
    EXPECT_EQ(testing::values(base), std::vector<double>(3, 0.0)) << what << " changed the memory";
  };
  refuses("add_", [&] { Tensor(expanded).add_(ones({4, 3}, TensorOptions().device(dev()))); });
  refuses("mul_", [&] { Tensor(expanded).mul_(2); });
  refuses("relu_", [&] { Tensor(expanded).relu_(); });
  refuses("copy_", [&] { Tensor(expanded).copy_(ones({4, 3})); });
  refuses("add_out", [&] {
    Tensor out = expanded;
    add_out(out, ones({4, 3}, TensorOptions().device(dev())), ones({4, 3}, TensorOptions().device(dev())));
  });
  Tensor stepped = zeros({4, 6}, TensorOptions().device(dev())).slice(1, 0, std::nullopt, 2);
  stepped.add_(1);
  EXPECT_EQ(testing::values(stepped), std::vector<double>(12, 1.0));
}

// Reading and writing two different views of the same memory at once: the result would depend on
// the order of the kernel's loads and stores (memcpy's on overlapping ranges is undefined).
// PyTorch refuses it where both are contiguous ranges; the same view read and written is fine.
TEST_P(LayoutRegression, WritesOverlappingTheirInputAreRefused) {
  const TensorOptions on = TensorOptions().dtype(kFloat32).device(dev());
  const std::string message =
      "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
      "location. Please clone() the tensor before performing the operation.";
  const auto refuses = [&](const char* what, const Tensor& watched, const std::function<void()>& write) {
    const std::vector<double> before = testing::values(watched);
    try {
      write();
      ADD_FAILURE() << what << " wrote over its own input";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << what << ": " << e.what();
    }
    EXPECT_EQ(testing::values(watched), before) << what << " changed the memory";
  };
  const Tensor x = arange(10, on);
  refuses("copy_ shifted by one", x, [&] { x.narrow(0, 1, 9).copy_(x.narrow(0, 0, 9)); });
  refuses("add_out shifted by one", x, [&] {
    Tensor out = x.narrow(0, 1, 9);
    add_out(out, x.narrow(0, 0, 9), ones({9}, on));
  });
  const Tensor m = arange(12, on).reshape({4, 3});
  refuses("add_ of its own first row", m, [&] { Tensor(m).add_(m[0]); });
  // The same memory read and written as one view, and disjoint or interleaved views, are fine.
  Tensor(x).add_(x);
  EXPECT_EQ(testing::values(x)[9], 18.0);
  x.narrow(0, 0, 5).copy_(x.narrow(0, 5, 5));
  EXPECT_EQ(testing::values(x)[0], 10.0);
  x.slice(0, 0, std::nullopt, 2).copy_(x.slice(0, 1, std::nullopt, 2));
  EXPECT_EQ(testing::values(x)[0], 12.0);
}

// A convolution of views that start at an odd element offset: cuDNN reads its operands 16-byte
// aligned, so on cuda such a view must decline to the general path rather than reach the graph.
TEST_P(LayoutRegression, Conv2dOfViewsAtAnOffset) {
  manual_seed(2);
  const Tensor x = randn({5, 3, 9, 9}).to(dev());
  const Tensor w = randn({5, 3, 3, 3}).to(dev());
  const auto conv = [](const std::vector<Tensor>& in) {
    return F::conv2d(in[0], in[1], F::Conv2dFuncOptions().padding(1));
  };
  const Tensor x_view = x.narrow(0, 1, 4), w_view = w.narrow(0, 1, 4);  // 243 and 27 floats in
  ASSERT_TRUE(x_view.is_contiguous() && x_view.storage_offset() == 243);
  expect_equal_gradients(gradients(conv, {x_view, w_view}), gradients(conv, {x_view.clone(), w_view.clone()}));
}

// index_select and gather along an empty dim: every index is out of range. cuda checks indices
// on the device without waiting (Note [Deferred checks]) and its kernel would read element 0 of
// an empty source; the op raises at once instead, on every device.
TEST_P(LayoutRegression, IndexingAnEmptyDimRaises) {
  const Tensor source = zeros({3, 0}, TensorOptions().device(dev()));
  const Tensor index = tensor({0}).to(dev());
  EXPECT_THROW(index_select(source, 1, index), IndexError);
  EXPECT_THROW(gather(source, 1, zeros({3, 1}, TensorOptions().dtype(kInt64).device(dev()))), IndexError);
  try {
    index_select(source, 1, index);
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index 0 is out of bounds for dimension of size 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(index_select(source, 1, tensor(std::vector<int64_t>{}).to(dev())).numel(), 0);
}

// A sum over 18 dims that do not merge: the CPU walks any number; CUDA's reduction takes 16 (a
// NotImplementedError beyond) and used to fill its layout past them on the host stack before it
// looked at the count.
TEST_P(LayoutRegression, SumOverEighteenUnmergedDims) {
  Shape shape(18, 2), reversed;
  for (int64_t d = 17; d >= 0; --d) reversed.push_back(d);
  const Tensor x = arange(1 << 18, TensorOptions().dtype(kFloat64).device(dev())).reshape(shape).permute(reversed);
  const double expected = double(1 << 18) * double((1 << 18) - 1) / 2;
  if (dev().is_cuda()) {
    try {
      (void)x.sum(Shape{0, 2, 4, 6, 8, 10, 12, 14, 16});
      ADD_FAILURE() << "cuda reduced 18 unmerged dims";
    } catch (const NotImplementedError& e) {
      EXPECT_NE(std::string(e.what()).find("supports at most 16 dims"), std::string::npos) << e.what();
    }
    return;
  }
  EXPECT_EQ(x.sum().item<double>(), expected);
  const Tensor halves = x.sum(Shape{0, 2, 4, 6, 8, 10, 12, 14, 16});
  EXPECT_EQ(halves.sum().item<double>(), expected);
  EXPECT_EQ(testing::values(halves), testing::values(x.contiguous().sum(Shape{0, 2, 4, 6, 8, 10, 12, 14, 16})));
}

INSTANTIATE_TEST_SUITE_P(Devices, LayoutRegression, ::testing::ValuesIn(testing::value_devices()), testing::device_test_name);

}  // namespace
}  // namespace locus
