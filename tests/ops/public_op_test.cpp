// Note [Public op names]: errors raised inside a composite public function name that function,
// the outermost one wins, and the name is gone once the function returns or throws.

#include <string>
#include <thread>

#include "src/core/public_op.h"
#include "tests/test_util.h"

namespace locus {
namespace {

// The op a device mismatch between sim:0 and cpu in add() reports.
std::string op_of_add_mismatch() {
  try {
    add(ones({2}, Device("sim:0")), ones({2}));
  } catch (const DeviceMismatchError& e) {
    return e.op();
  }
  return "no error";
}

TEST(PublicOpScope, OutermostScopeNamesInnerErrorsUntilItCloses) {
  EXPECT_EQ(op_of_add_mismatch(), "add");
  {
    const detail::PublicOpScope outer("outer_fn");
    EXPECT_EQ(op_of_add_mismatch(), "outer_fn");
    {
      const detail::PublicOpScope inner("inner_fn");
      EXPECT_EQ(op_of_add_mismatch(), "outer_fn");
      EXPECT_EQ(detail::error_prefix("sum"), "[locus::outer_fn] ");
    }
    EXPECT_EQ(op_of_add_mismatch(), "outer_fn");
  }
  EXPECT_EQ(op_of_add_mismatch(), "add");
  EXPECT_EQ(detail::error_prefix("sum"), "[locus::sum] ");
}

TEST(PublicOpScope, ClosesWhenTheFunctionThrows) {
  const Tensor s = ones({2, 2}, Device("sim:0"));
  EXPECT_THROW(mm(ones({2, 2}), s), DeviceMismatchError);        // thrown by PublicOp's own check
  EXPECT_THROW(mm(s, ones({3, 3}, Device("sim:0"))), ShapeError);  // thrown inside it
  EXPECT_THROW(nn::functional::cross_entropy(ones({2, 3}), tensor({0L, 5L})), IndexError);
  EXPECT_EQ(op_of_add_mismatch(), "add");
}

TEST(PublicOpScope, IsPerThread) {
  const detail::PublicOpScope here("this_thread_fn");
  std::string there;
  std::thread([&] { there = op_of_add_mismatch(); }).join();
  EXPECT_EQ(there, "add");
  EXPECT_EQ(op_of_add_mismatch(), "this_thread_fn");
}

TEST(PublicOpErrors, MmNamesItselfNotMatmul) {
  const Tensor c = ones({2, 2});
  const Tensor s = ones({2, 2}, Device("sim:0"));
  try {
    mm(c, s);
    FAIL();
  } catch (const DeviceMismatchError& e) {
    EXPECT_STREQ(e.what(),
                 "Expected all tensors to be on the same device, but found at least two devices, cpu and sim:0! "
                 "(when checking argument 'mat2' of 'mm')");
  }
  try {
    mm(c, ones({2, 2}, TensorOptions().dtype(kInt64)));
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_STREQ(e.what(), "[locus::mm] expected both operands to have the same dtype, got float32 and int64");
  }
  try {
    mm(c, ones({3, 2}));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "[locus::mm] cannot multiply shapes [2, 2] and [3, 2]: the inner dimensions differ (2 vs 3)");
  }
  Tensor out = zeros({2, 2}, Device("sim:0"));
  try {
    mm_out(out, c, c);
    FAIL();
  } catch (const DeviceMismatchError& e) {
    EXPECT_EQ(e.argument(), "out");
    EXPECT_EQ(e.op(), "mm");
  }
  // matmul keeps its own name, also in its vector cases built from views.
  try {
    matmul(ones({3}), ones({4}));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "[locus::matmul] cannot multiply shapes [3] and [4]: vectors of different lengths");
  }
}

TEST(PublicOpErrors, StackNamesItselfForItsCat) {
  try {
    stack({ones({2}), ones({2})}, 3);
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "[locus::stack] dimension out of range (expected to be in range of [-2, 1], but got 3)");
  }
  try {
    stack({ones({2}), ones({3})});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "[locus::stack] expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
  }
}

// allclose and equal compare on the host, yet follow the device rule (PyTorch raises too).
TEST(PublicOpErrors, AllcloseAndEqualFollowTheDeviceRule) {
  const Tensor s = ones({2}, Device("sim:0"));
  try {
    allclose(s, ones({2}));
    FAIL();
  } catch (const DeviceMismatchError& e) {
    EXPECT_STREQ(e.what(),
                 "Expected all tensors to be on the same device, but found at least two devices, sim:0 and cpu! "
                 "(when checking argument 'other' of 'allclose')");
  }
  try {
    equal(ones({2}), s);
    FAIL();
  } catch (const DeviceMismatchError& e) {
    EXPECT_EQ(e.op(), "equal");
    EXPECT_EQ(e.argument(), "other");
  }
  EXPECT_TRUE(allclose(s, s.clone()));
  EXPECT_FALSE(allclose(s, s + 1));
  EXPECT_TRUE(allclose(tensor(1.f).to("sim:0"), tensor(1.f)));  // a 0-dim CPU tensor joins
  EXPECT_TRUE(equal(s, s.clone()));
}

TEST(PublicOpErrors, LikeFactoriesNameThemselves) {
  const Tensor ints = tensor({1L, 2L});
  try {
    rand_like(ints);
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_STREQ(e.what(), "[locus::rand_like] needs a floating dtype");
  }
  try {
    randn_like(ints);
    FAIL();
  } catch (const DTypeError& e) {
    EXPECT_STREQ(e.what(), "[locus::randn_like] needs a floating dtype");
  }
  EXPECT_STREQ(detail::error_prefix("rand").c_str(), "[locus::rand] ");  // the scope closed
  EXPECT_EQ(rand_like(ints, TensorOptions().dtype(kFloat64)).dtype(), kFloat64);
}

// backward(gradient) checks the device first, as every op does, then the shape.
TEST(PublicOpErrors, BackwardChecksItsGradientDeviceFirst) {
  const Tensor x = ones({2, 3}, Device("sim:0")).requires_grad_();
  const Tensor y = x * 2;
  try {
    y.backward(ones({3}));
    FAIL();
  } catch (const DeviceMismatchError& e) {
    EXPECT_STREQ(e.what(),
                 "Expected all tensors to be on the same device, but found at least two devices, sim:0 and cpu! "
                 "(when checking argument 'gradient' of 'backward')");
  }
  try {
    y.backward(ones({3}, Device("sim:0")));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "[locus::backward] the gradient's shape [3] does not match the tensor's [2, 3]");
  }
  y.backward(full({2, 3}, 0.5, Device("sim:0")));
  testing::expect_close(x.grad(), {1, 1, 1, 1, 1, 1});
}

// A kernel a device lacks, met inside a composite: the message names the function the user
// called and the op the policy and fallback_count() speak of.
TEST(PublicOpErrors, MissingKernelInsideACompositeNamesBoth) {
  const sim::Config cfg = sim::config();
  sim::Config lacking = cfg;
  lacking.unsupported_ops = {"log_softmax"};
  sim::configure(lacking);
  set_cpu_fallback(CpuFallback::Error);
  const bool cuda_built = testing::cuda_kernels_loaded();  // listed where its module is loaded
  try {
    nn::functional::cross_entropy(ones({2, 3}, Device("sim:0")), tensor({0L, 1L}).to("sim:0"));
    ADD_FAILURE();
  } catch (const NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string("[locus::cross_entropy] needs log_softmax, which is not implemented for device 'sim:0' (dtype "
                          "float32). Implemented for: cpu") +
                  (cuda_built ? ", cuda" : "") + ". Set LOCUS_CPU_FALLBACK=warn to run it on the CPU.");
  }
  try {
    log_softmax(ones({2, 3}, Device("sim:0")), 1);
    ADD_FAILURE();
  } catch (const NotImplementedError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[locus::log_softmax] not implemented for device 'sim:0'", 0), 0u) << e.what();
  }
  sim::configure(cfg);
}

}  // namespace
}  // namespace locus
