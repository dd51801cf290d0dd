// CUDA-only behaviour: kernels on awkward shapes and every dtype, transfers and their async
// hazards, the allocator under streams and threads, out of memory, streams and events, several
// devices. Every test skips with the driver's reason where there is no GPU, except the ones
// that check what a GPU-less machine must do.

#include <atomic>
#include <functional>
#include <random>
#include <thread>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;
using testing::MemoryBaseline;
using testing::values;

const Device kCuda("cuda:0");

TEST(CudaWithoutGpu, EverythingSaysWhyAndNothingCrashes) {
  if (cuda::is_available()) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_FALSE(cuda::unavailable_reason().empty());
  try {
    zeros({2}, kCuda);
    FAIL();
  } catch (const BackendUnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find(cuda::unavailable_reason()), std::string::npos) << e.what();
  }
  EXPECT_THROW(cuda::Stream(), BackendUnavailableError);
  EXPECT_THROW(cuda::current_stream(), BackendUnavailableError);
  EXPECT_THROW(cuda::synchronize(), BackendUnavailableError);
  EXPECT_THROW(tensor({1.f}).cuda(), BackendUnavailableError);
  // The precision switch is host state and works everywhere.
  set_float32_matmul_precision("high");
  EXPECT_TRUE(cuda::allow_tf32());
  set_float32_matmul_precision("highest");
  EXPECT_FALSE(cuda::allow_tf32());
  EXPECT_THROW(set_float32_matmul_precision("fast"), ValueError);
}

// ---- values on awkward shapes, against float64 on the CPU ---------------------------------

TEST(CudaValues, ReductionsOnOddNonContiguousAndHugeShapes) {
  REQUIRE_CUDA();
  MemoryBaseline base(kCuda);
  manual_seed(3);
  const Tensor host = randn({7, 1, 1025, 3}, kFloat64);
  const Tensor dev = host.to(kFloat32).to(kCuda).permute({2, 0, 1, 3});  // non-contiguous
  const Tensor ref = host.to(kFloat32).to(kFloat64).permute({2, 0, 1, 3});
  for (const Shape& dims : {Shape{0}, Shape{1}, Shape{3}, Shape{0, 3}, Shape{1, 2}, Shape{0, 1, 2, 3}}) {
    expect_close(sum(dev, dims, false), values(sum(ref, dims, false)), 1e-5, 1e-4);
    expect_close(mean(dev, dims, true), values(mean(ref, dims, true)), 1e-5, 1e-5);
  }
  // A full reduction big enough to be split across every SM, with an odd length.
  const int64_t n = (int64_t{1} << 24) + 3;
  const Tensor big = rand({n}, kCuda);
  const double expected = values(sum(big.cpu().to(kFloat64)))[0];
  EXPECT_NEAR(big.sum().item<float>(), expected, 1e-6 * expected);
  // Outer-dim reduction with few outputs and a long reduced range.
  const Tensor tall = rand({1 << 20, 3}, kCuda);
  expect_close(tall.sum(Shape{0}), values(tall.cpu().to(kFloat64).sum(Shape{0})), 1e-6, 1e-3);
  // Integer sums accumulate in int64.
  const Tensor ints = full({100000}, 100000, TensorOptions().dtype(kInt32).device(kCuda));
  EXPECT_EQ(ints.sum().item<int64_t>(), int64_t{100000} * 100000);
}

TEST(CudaValues, MaxMinArgmaxWithTiesAndNaN) {
  REQUIRE_CUDA();
  // Every expectation comes from the CPU kernels (first index on ties, NaN first), not by hand.
  const Tensor cpu = tensor(std::vector<float>{1.f, 5.f, 5.f, -2.f, 0.f, 5.f, NAN, 2.f, NAN}, Shape{3, 3});
  const Tensor x = cpu.to(kCuda);
  EXPECT_EQ(argmax(x).item<int64_t>(), argmax(cpu).item<int64_t>());
  EXPECT_EQ(argmin(x).item<int64_t>(), argmin(cpu).item<int64_t>());
  for (int64_t dim : {0, 1}) {
    EXPECT_EQ(values(max(x, dim).indices), values(max(cpu, dim).indices)) << "dim " << dim;
    EXPECT_EQ(values(min(x, dim).indices), values(min(cpu, dim).indices)) << "dim " << dim;
    expect_close(max(x, dim).values, values(max(cpu, dim).values), 0, 0);
    expect_close(min(x, dim).values, values(min(cpu, dim).values), 0, 0);
    EXPECT_EQ(values(argmin(x, dim)), values(argmin(cpu, dim))) << "dim " << dim;
  }
  const Tensor with_nan = tensor({1.f, NAN, 3.f}).to(kCuda);
  EXPECT_TRUE(std::isnan(max(with_nan).item<float>()));
  EXPECT_EQ(argmax(with_nan).item<int64_t>(), argmax(with_nan.cpu()).item<int64_t>());
  const Tensor long_row = rand({3, 100003}, kCuda);
  EXPECT_EQ(values(argmax(long_row, 1)), values(argmax(long_row.cpu(), 1)));
  const Tensor huge = rand({(int64_t{1} << 22) + 5}, kCuda);
  EXPECT_EQ(argmax(huge).item<int64_t>(), argmax(huge.cpu()).item<int64_t>());
}

TEST(CudaValues, SoftmaxIsStableOnLargeInputsAndEveryLayout) {
  REQUIRE_CUDA();
  for (const Shape& shape : {Shape{33, 4097}, Shape{5, 10}, Shape{1000, 3}, Shape{2, 7, 9}}) {
    const Tensor x = mul(randn(shape, kFloat64), 1000.0);  // exp would overflow without the shift
    for (int64_t dim : {int64_t{0}, int64_t{-1}}) {
      const Tensor dev = x.to(kFloat32).to(kCuda);
      const Tensor ref = x.to(kFloat32).to(kFloat64);
      expect_close(softmax(dev, dim), values(softmax(ref, dim)), 1e-5, 1e-6);
      expect_close(log_softmax(dev, dim), values(log_softmax(ref, dim)), 1e-5, 1e-3);
    }
  }
  const Tensor h = randn({64, 300}, TensorOptions().dtype(kBFloat16).device(kCuda));
  expect_close(softmax(h, 1).sum(Shape{1}), std::vector<double>(64, 1.0), 0, 2e-2);
}

// ---- every dtype ----------------------------------------------------------------------------

TEST(CudaValues, EveryDtypeMatchesTheCpuKernels) {
  REQUIRE_CUDA();
  const std::vector<DType> all{kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64};
  const Tensor a64 = tensor(std::vector<double>{0., 1., 2., 3., 7., 9., 12., 100.}, Shape{2, 4});
  const Tensor b64 = tensor({1., 1., 3., 2.}).view({1, 4}).expand({2, 4});
  for (DType t : all) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const Tensor a = a64.to(t), b = b64.to(t);
    const Tensor ca = a.to(kCuda), cb = b.to(kCuda);
    EXPECT_EQ(values(add(ca, cb)), values(add(a, b)));
    EXPECT_EQ(values(mul(ca, cb)), values(mul(a, b)));
    EXPECT_EQ(values(maximum(ca, cb)), values(maximum(a, b)));
    EXPECT_EQ(values(lt(ca, cb)), values(lt(a, b)));
    EXPECT_EQ(values(eq(ca, 3)), values(eq(a, 3)));
    EXPECT_EQ(values(where(gt(ca, cb), ca, cb)), values(where(gt(a, b), a, b)));
    EXPECT_EQ(values(ca.t().contiguous()), values(a.t().contiguous()));
    EXPECT_EQ(values(max(ca, 1).indices), values(max(a, 1).indices));
    if (t != kBool) {
      EXPECT_EQ(values(argmax(ca, 1)), values(argmax(a, 1)));
      EXPECT_EQ(values(abs(ca)), values(abs(a)));
      EXPECT_EQ(values(sub(ca, cb)), values(sub(a, b)));
      EXPECT_EQ(values(clamp(ca, 1, 9)), values(clamp(a, 1, 9)));
      EXPECT_EQ(values(max(ca, 0).values), values(max(a, 0).values));
      EXPECT_EQ(values(matmul(ca, cb.t())), values(matmul(a, b.t())));
      EXPECT_EQ(values(index_select(ca, 1, tensor({3L, 0L, 2L}).to(kCuda))), values(index_select(a, 1, tensor({3L, 0L, 2L}))));
    }
    if (is_floating_point(t)) {
      expect_close(div(ca, cb), values(div(a, b)), 1e-3);
      expect_close(exp(ca.mul(0.01)), values(exp(a.mul(0.01))), 1e-2);
      expect_close(gelu(ca), values(gelu(a)), 1e-2, 1e-3);
      expect_close(sigmoid(ca), values(sigmoid(a)), 1e-2, 1e-3);
      expect_close(softmax(ca, 1), values(softmax(a, 1)), 1e-2, 1e-3);
      expect_close(ca.mean(), values(a.mean()), 1e-2);
    }
    for (DType to : all) {
      SCOPED_TRACE("to " + std::string(dtype_name(to)));
      EXPECT_EQ(values(ca.to(to)), values(a.to(to)));
    }
  }
}

// Every elementwise op of the op table, tensor and number forms, every dtype: the CUDA kernels
// run the CPU's functors, so they agree exactly on integers and within a few ulps on floats
// (the device math library rounds sin, erf, ... differently from glibc), and they refuse the
// same dtypes with the same errors.
TEST(CudaValues, EveryOpOfTheTableMatchesTheCpu) {
  REQUIRE_CUDA();
  using Unary = std::function<Tensor(const Tensor&)>;
  using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<const char*, Unary>> unary = {
      {"neg", [](const Tensor& x) { return neg(x); }},          {"abs", [](const Tensor& x) { return abs(x); }},
      {"sign", [](const Tensor& x) { return sign(x); }},        {"exp", [](const Tensor& x) { return exp(x * 0.1); }},
      {"expm1", [](const Tensor& x) { return expm1(x * 0.1); }}, {"log", [](const Tensor& x) { return log(x + 1); }},
      {"log1p", [](const Tensor& x) { return log1p(x); }},      {"sqrt", [](const Tensor& x) { return sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x + 1); }},  {"sin", [](const Tensor& x) { return sin(x); }},
      {"cos", [](const Tensor& x) { return cos(x); }},          {"tanh", [](const Tensor& x) { return tanh(x * 0.1); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},  {"erf", [](const Tensor& x) { return erf(x * 0.1); }},
      {"relu", [](const Tensor& x) { return relu(x); }},        {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"floor", [](const Tensor& x) { return floor(x * 0.3); }}, {"ceil", [](const Tensor& x) { return ceil(x * 0.3); }},
      {"round", [](const Tensor& x) { return round(x * 0.5); }}, {"trunc", [](const Tensor& x) { return trunc(x * 0.3); }},
      {"clamp", [](const Tensor& x) { return clamp(x, 2, 9); }}, {"logical_not", [](const Tensor& x) { return logical_not(x); }},
  };
  const std::vector<std::pair<const char*, Binary>> binary = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b, 2); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }},
      {"div_trunc", [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); }},
      {"div_floor", [](const Tensor& a, const Tensor& b) { return div(a, b, "floor"); }},
      {"floor_divide", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); }},
      {"remainder", [](const Tensor& a, const Tensor& b) { return remainder(a, b); }},
      {"fmod", [](const Tensor& a, const Tensor& b) { return fmod(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"logical_and", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }},
      {"logical_or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }},
      {"logical_xor", [](const Tensor& a, const Tensor& b) { return logical_xor(a, b); }},
      {"remainder_number", [](const Tensor& a, const Tensor&) { return remainder(a, -3); }},
      {"pow_number", [](const Tensor& a, const Tensor&) { return pow(a, 2); }},
      {"sub_number_first", [](const Tensor& a, const Tensor&) { return 7 - a; }},
  };
  // Non-negative values, a divisor without zeros, a broadcast and a transposed operand.
  const Tensor a64 = tensor(std::vector<double>{0., 1., 2., 3., 7., 9., 12., 100., 5., 6., 13., 1.}, Shape{3, 4});
  const Tensor b64 = tensor({1., 2., 3., 2.}).view({1, 4});
  auto compare = [](const Tensor& on_cuda, const Tensor& on_cpu) {
    ASSERT_EQ(on_cuda.dtype(), on_cpu.dtype());
    ASSERT_EQ(on_cuda.device(), kCuda);
    const DType d = on_cpu.dtype();
    const double rtol = d == kFloat64 ? 1e-14 : d == kFloat32 ? 1e-6 : is_floating_point(d) ? 1e-2 : 0;
    expect_close(on_cuda, values(on_cpu), rtol, rtol);
  };
  for (DType t : {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
    const Tensor a = a64.to(t), b = b64.to(t), at = a64.t().contiguous().t().to(t);
    for (const auto& [name, f] : unary) {
      SCOPED_TRACE(std::string(name) + " " + std::string(dtype_name(t)));
      Tensor expected;
      try {
        expected = f(a);
      } catch (const Error&) {
        EXPECT_THROW(f(a.to(kCuda)), Error);
        continue;
      }
      compare(f(a.to(kCuda)), expected);
      compare(f(at.to(kCuda)), f(at));
    }
    for (const auto& [name, f] : binary) {
      SCOPED_TRACE(std::string(name) + " " + std::string(dtype_name(t)));
      Tensor expected;
      try {
        expected = f(a, b);
      } catch (const Error&) {
        EXPECT_THROW(f(a.to(kCuda), b.to(kCuda)), Error);
        continue;
      }
      compare(f(a.to(kCuda), b.to(kCuda)), expected);
      compare(f(at.to(kCuda), b.to(kCuda)), f(at, b));
    }
  }
}

TEST(CudaValues, RandomMatchesTheCpuForTheSameSeed) {
  REQUIRE_CUDA();
  for (DType t : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    manual_seed(11);
    const Tensor c = rand({1000}, TensorOptions().dtype(t).device(kCuda));
    manual_seed(11);
    const Tensor h = rand({1000}, TensorOptions().dtype(t));
    EXPECT_EQ(values(c), values(h)) << dtype_name(t);
  }
  manual_seed(5);
  const Tensor c = randn({1000}, kCuda);
  manual_seed(5);
  expect_close(c, values(randn({1000})), 1e-6, 1e-6);
  manual_seed(5);
  const Tensor ci = randint(-5, 5, {1000}, kCuda);
  manual_seed(5);
  EXPECT_EQ(values(ci), values(randint(-5, 5, {1000})));
  expect_close(arange(0, 10, 0.5, kCuda), values(arange(0, 10, 0.5)), 0, 0);
}

TEST(CudaValues, MatmulPrecisionModesAndLayouts) {
  REQUIRE_CUDA();
  manual_seed(2);
  const Tensor a = randn({3, 65, 129}, kFloat64), b = randn({129, 31}, kFloat64);
  const std::vector<double> ref = values(matmul(a, b));
  const auto rel_error = [&](const Tensor& got) {
    const std::vector<double> g = values(got);
    double num = 0, den = 0;
    for (size_t i = 0; i < g.size(); ++i) num += (g[i] - ref[i]) * (g[i] - ref[i]), den += ref[i] * ref[i];
    return std::sqrt(num / den);
  };
  const Tensor ca = a.to(kFloat32).to(kCuda), cb = b.to(kFloat32).to(kCuda);
  EXPECT_LT(rel_error(matmul(ca, cb)), 1e-6);
  EXPECT_LT(rel_error(matmul(a.to(kCuda), b.to(kCuda))), 1e-14);
  // Transposed and sliced operands take cuBLAS's transpose flags or a copy, never wrong strides.
  EXPECT_LT(rel_error(matmul(ca.transpose(1, 2).contiguous().transpose(1, 2), cb.t().contiguous().t())), 1e-6);
  set_float32_matmul_precision("high");
  const double tf32 = rel_error(matmul(ca, cb));
  set_float32_matmul_precision("highest");
  EXPECT_LT(tf32, 5e-3);
  EXPECT_LT(rel_error(matmul(a.to(kBFloat16).to(kCuda), b.to(kBFloat16).to(kCuda))), 2e-2);
  EXPECT_LT(rel_error(matmul(a.to(kFloat16).to(kCuda), b.to(kFloat16).to(kCuda))), 5e-3);
  const Tensor empty_k = matmul(zeros({4, 0}, kCuda), zeros({0, 5}, kCuda));
  EXPECT_EQ(values(empty_k), std::vector<double>(20, 0.0));
}

// Note [Deferred checks]: a bad index is checked on the device without a wait, raised at the
// next synchronization, and the device stays usable; nothing is read out of bounds meanwhile.
TEST(CudaValues, BadIndexThrowsAtTheNextSynchronizationAndLeavesTheDeviceUsable) {
  REQUIRE_CUDA();
  const Tensor x = arange(0, 12, 1, kCuda).view({3, 4});
  Tensor picked = index_select(x, 1, tensor({0L, 4L}).to(kCuda));  // queued, no wait
  try {
    cuda::synchronize();
    FAIL() << "the bad index was not reported";
  } catch (const IndexError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[locus::index_select] index 4 is out of bounds for dimension of size 4 (checked "
                                          "on cuda:0 without waiting", 0),
              0u)
        << e.what();
  }
  cuda::synchronize();  // raised once, then cleared
  EXPECT_THROW(gather(x, 0, full({3, 4}, -4, TensorOptions().dtype(kInt64).device(kCuda))).cpu(), IndexError);
  expect_close(gather(x, 1, tensor(std::vector<int64_t>{3, 0, 1}, Shape{3, 1}).to(kCuda)), {3, 4, 9});
  // The training loop's check: cross_entropy's targets, raised by loss.item().
  const Tensor logits = zeros({2, 3}, kCuda);
  EXPECT_THROW(nn::functional::cross_entropy(logits, tensor({0L, 3L}).to(kCuda)).item<float>(), IndexError);
  EXPECT_NEAR(nn::functional::cross_entropy(logits, tensor({0L, 2L}).to(kCuda)).item<float>(), std::log(3.0), 1e-6);
}

// ---- transfers --------------------------------------------------------------------------------

TEST(CudaTransfers, NonBlockingDeviceToHostIsNeverReadHalfDone) {
  REQUIRE_CUDA();
  MemoryBaseline base(kCuda);
  for (int round = 0; round < 5; ++round) {
    Tensor x = full({1 << 24}, 1.f, kCuda);
    for (int i = 0; i < 20; ++i) x.add_(1.f);  // keeps the stream busy past the copy's return
    const Tensor host = x.to(Device("cpu"), /*non_blocking=*/true);
    EXPECT_TRUE(host.is_pinned());
    EXPECT_EQ(host.data_ptr<float>()[(1 << 24) - 1], 21.f);  // the read waits for the copy
    EXPECT_EQ(host.sum().item<double>(), 21.0 * (1 << 24));
  }
}

// save() reads its tensors through untyped pointers: a pending non-blocking copy must land
// first, or the file holds whatever the pinned buffer had before.
TEST(CudaTransfers, SavingANonBlockingCopyWritesTheCopiedValues) {
  REQUIRE_CUDA();
  const std::string path = ::testing::TempDir() + "/nonblocking.safetensors";
  Tensor x = full({1 << 22}, 1.f, kCuda);
  for (int i = 0; i < 20; ++i) x.add_(1.f);  // the copy below is still queued when save() starts
  save({{"x", x.to(Device("cpu"), /*non_blocking=*/true)}}, path);
  const auto loaded = load(path);
  EXPECT_EQ(loaded.at("x").min().item<float>(), 21.f);
  EXPECT_EQ(loaded.at("x").max().item<float>(), 21.f);
}

// Two non-blocking copies from one pinned buffer both read it: the second does not wait for the
// first (only a host write into the buffer must).
TEST(CudaTransfers, CopiesFromOnePinnedBufferQueueWithoutWaiting) {
  REQUIRE_CUDA();
  const Tensor batch = full({1 << 20}, 3.f).pin_memory();
  Tensor busy = zeros({1 << 24}, kCuda);
  for (int i = 0; i < 200; ++i) busy.add_(1.f);  // tens of milliseconds of queued work
  const Tensor first = batch.to(kCuda, /*non_blocking=*/true);
  cuda::Event after_first;
  after_first.record();
  const Tensor second = batch.to(kCuda, /*non_blocking=*/true);
  EXPECT_FALSE(after_first.query()) << "the second copy waited for the first";
  EXPECT_EQ(eq(second, 3.f).sum().item<int64_t>(), int64_t{1} << 20);
  EXPECT_EQ(eq(first, 3.f).sum().item<int64_t>(), int64_t{1} << 20);
}

TEST(CudaTransfers, PinnedSourceChangedAfterAsyncCopyDoesNotCorruptTheResult) {
  REQUIRE_CUDA();
  Tensor busy = rand({4096, 4096}, kCuda);
  for (int i = 0; i < 5; ++i) busy = matmul(busy, busy).mul_(1e-3f);  // queue work ahead of the copy
  Tensor src = full({1 << 22}, 7.f).pin_memory();
  const Tensor dev = src.to(kCuda, /*non_blocking=*/true);
  src.fill_(-1.f);  // waits for the device to have read src
  EXPECT_EQ(dev.sum().item<double>(), 7.0 * (1 << 22));
  EXPECT_EQ(src.sum().item<double>(), -1.0 * (1 << 22));
}

TEST(CudaTransfers, PinnedPoolHasItsOwnStatsAndGivesMemoryBack) {
  REQUIRE_CUDA();
  memory::host_pinned_empty_cache();
  const int64_t before = memory::host_pinned_memory_stats().allocated_bytes.current;
  {
    const Tensor p = empty({1 << 20}).pin_memory();
    EXPECT_TRUE(p.is_pinned());
    EXPECT_GE(memory::host_pinned_memory_stats().allocated_bytes.current, before + (4 << 20));
    const Tensor d = p.to(kCuda, true);
    cuda::synchronize();
  }
  EXPECT_EQ(memory::host_pinned_memory_stats().allocated_bytes.current, before);
  memory::host_pinned_empty_cache();
  EXPECT_EQ(memory::host_pinned_memory_stats().reserved_bytes.current, memory::host_pinned_memory_stats().allocated_bytes.current);
}

// ---- memory -----------------------------------------------------------------------------------

TEST(CudaMemory, StatsExactEmptyCacheGivesBackAndOomThenNormalWork) {
  REQUIRE_CUDA();
  cuda::empty_cache();
  const int64_t base = cuda::memory_allocated();
  {
    const Tensor t = empty({1 << 26}, kCuda);
    EXPECT_EQ(cuda::memory_allocated(), base + (int64_t{1} << 28));
    EXPECT_GE(cuda::memory_reserved(), cuda::memory_allocated());
  }
  EXPECT_EQ(cuda::memory_allocated(), base);
  const uint64_t free_before = cuda::mem_get_info().first;
  cuda::empty_cache();
  EXPECT_GE(cuda::mem_get_info().first, free_before + (uint64_t{1} << 28) - (uint64_t{32} << 20));
  const uint64_t total = cuda::get_device_properties().total_memory;
  try {
    empty({static_cast<int64_t>(total)}, kCuda);  // 4x the device
    FAIL();
  } catch (const OutOfMemoryError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("CUDA out of memory. Tried to allocate ", 0), 0u) << msg;
    EXPECT_NE(msg.find("cuda:0 has a total capacity of"), std::string::npos) << msg;
  }
  EXPECT_EQ(cuda::memory_allocated(), base);
  EXPECT_GE(cuda::memory_stats().num_ooms, 1);
  expect_close(ones({1000}, kCuda).sum(), {1000});
}

TEST(CudaMemory, AllocatorStressAcrossStreamsAndThreads) {
  REQUIRE_CUDA();
  const int64_t base = cuda::memory_allocated();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &failures] {
      try {
        std::mt19937 rng(t);
        cuda::Stream stream;
        cuda::StreamGuard guard(stream);
        std::vector<Tensor> live;
        for (int i = 0; i < 300; ++i) {
          const int64_t n = 1 + static_cast<int64_t>(rng() % (1 << (rng() % 22)));
          live.push_back(full({n}, static_cast<float>(t), kCuda));
          if (live.size() > 16) live.erase(live.begin() + static_cast<long>(rng() % live.size()));
        }
        for (const Tensor& x : live)
          if (x.max().item<float>() != static_cast<float>(t)) ++failures;
      } catch (...) {
        ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(cuda::memory_allocated(), base);
}

TEST(CudaMemory, RecordStreamDefersReuseUntilTheOtherStreamIsDone) {
  REQUIRE_CUDA();
  cuda::Stream side;
  Tensor x = rand({2048, 2048}, kCuda);
  const void* old_ptr = x.data_ptr();
  {
    cuda::StreamGuard g(side);
    side.wait_stream(cuda::default_stream());
    Tensor y = x;
    for (int i = 0; i < 10; ++i) y = matmul(y, x);  // long work reading x on `side`
  }
  x.record_stream(side);
  x = Tensor();
  const Tensor z = empty({2048, 2048}, kCuda);  // same size, same (default) stream
  if (!side.query()) EXPECT_NE(z.data_ptr(), old_ptr) << "block reused while another stream may read it";
  side.synchronize();
}

// ---- streams and events ---------------------------------------------------------------------

TEST(CudaStreams, OrderingGuardsAndEvents) {
  REQUIRE_CUDA();
  cuda::Stream s1, s2(-1, -1);
  EXPECT_NE(s1, cuda::default_stream());
  EXPECT_LE(s2.priority(), 0);
  Tensor x = zeros({1 << 22}, kCuda);  // filled on the default stream
  s1.wait_stream(cuda::current_stream());  // the streams do not order themselves: s1 waits for the fill
  {
    cuda::StreamGuard g(s1);
    EXPECT_EQ(cuda::current_stream(), s1);
    for (int i = 0; i < 50; ++i) x.add_(1.f);
  }
  EXPECT_EQ(cuda::current_stream(), cuda::default_stream());
  s2.wait_stream(s1);
  Tensor y;
  {
    cuda::StreamGuard g(s2);
    y = mul(x, 2.f);
  }
  cuda::current_stream().wait_stream(s2);  // the checks below run on the default stream
  s2.synchronize();
  EXPECT_TRUE(s2.query());
  // Every element, not just the largest: a missing wait shows up as some elements short of 100.
  EXPECT_EQ(eq(y, 100.f).sum().item<int64_t>(), int64_t{1} << 22);
  cuda::Event start(true), end(true);
  start.record();
  for (int i = 0; i < 10; ++i) x.mul_(1.0001f);
  end.record();
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_GT(start.elapsed_time(end), 0.f);
  cuda::Event plain;
  EXPECT_TRUE(plain.query());
  EXPECT_THROW(plain.elapsed_time(end), ValueError);
}

TEST(CudaDevices, CurrentDeviceGuardsAndSeveralGpus) {
  REQUIRE_CUDA();
  EXPECT_EQ(cuda::current_device(), 0);
  {
    DeviceGuard g(Device("cuda:0"));
    EXPECT_EQ(zeros({1}, Device("cuda")).device(), Device("cuda:0"));
  }
  EXPECT_THROW(zeros({1}, Device("cuda:" + std::to_string(cuda::device_count()))), IndexError);
  if (cuda::device_count() < 2) GTEST_SKIP() << "one GPU: the multi-device part needs two";
  const Tensor a = arange(0, 1000, 1, Device("cuda:0"));
  const Tensor b = a.to(Device("cuda:1"));
  EXPECT_EQ(b.device(), Device("cuda:1"));
  EXPECT_EQ(values(b), values(a));
  {
    DeviceGuard g(Device("cuda:1"));
    EXPECT_EQ(zeros({1}, Device("cuda")).device(), Device("cuda:1"));
    EXPECT_EQ(cuda::current_device(), 1);
  }
  EXPECT_THROW(add(a, b), DeviceMismatchError);
  EXPECT_GT(cuda::memory_allocated(1), 0);
}

}  // namespace
}  // namespace locus
