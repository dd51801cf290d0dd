// Moves between devices, the device rule, host-access rules, memory stats, OOM, fallback.

#include <random>
#include <sstream>
#include <thread>

#include "src/runtime/caching_allocator.h"
#include "src/runtime/host_memory.h"
#include "tests/test_util.h"

namespace locus {
namespace {

using testing::expect_close;

TEST(Moves, NoOpMovesReturnTheSameTensor) {
  const Tensor x = randn({3, 3});
  EXPECT_TRUE(x.cpu().is_same(x));
  EXPECT_TRUE(x.to(Device("cpu")).is_same(x));
  EXPECT_TRUE(x.to(kFloat32).is_same(x));
  EXPECT_FALSE(x.to(Device("cpu"), false, true).is_same(x));
  const Tensor s = x.to("sim:0");
  EXPECT_TRUE(s.to("sim:0").is_same(s));
  EXPECT_TRUE(s.to("sim").is_same(s));  // "sim" means the current sim device
  EXPECT_FALSE(s.to("sim:1").is_same(s));
  EXPECT_TRUE(allclose(s.to("sim:1").cpu(), x, 0, 0));
  const Tensor h = x.to("sim:1", kFloat16);
  EXPECT_EQ(h.dtype(), kFloat16);
  EXPECT_EQ(h.device(), Device("sim:1"));
}

TEST(Moves, CopyBetweenDevicesConvertsAndBroadcasts) {
  Tensor dst = zeros({2, 3}, Device("sim:1"));
  dst.copy_(tensor({1.0, 2.0, 3.0}).to("sim:0"));
  expect_close(dst, {1, 2, 3, 1, 2, 3});
  Tensor strided = zeros({3, 2}, Device("sim:0")).t();
  strided.copy_(tensor({1, 2, 3, 4, 5, 6}).reshape({2, 3}));
  expect_close(strided, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(dst.copy_(ones({4})), ShapeError);
}

TEST(DeviceRule, MismatchMessageNamesBothDevicesArgumentAndOp) {
  const Tensor c = tensor({1.f, 2.f});
  const Tensor s = tensor({3.f, 4.f}).to("sim:0");
  try {
    add(s, c);
    FAIL();
  } catch (const DeviceMismatchError& e) {
    EXPECT_STREQ(e.what(),
                 "Expected all tensors to be on the same device, but found at least two devices, sim:0 and cpu! "
                 "(when checking argument 'other' of 'add')");
    EXPECT_EQ(e.op(), "add");
  }
  // The fix from the seeds: move one operand.
  expect_close(c.to(s.device()) + s, {4, 6});
}

TEST(DeviceRule, EveryOpFamilyChecksEveryArgument) {
  const Tensor c = ones({2, 2});
  const Tensor s = ones({2, 2}, Device("sim:0"));
  const Tensor s1 = ones({2, 2}, Device("sim:1"));
  const Tensor idx = tensor({0, 1});
  auto expect_mismatch = [](auto f, const char* arg, const char* op) {
    try {
      f();
      FAIL() << op;
    } catch (const DeviceMismatchError& e) {
      EXPECT_EQ(e.argument(), arg) << op;
      EXPECT_EQ(e.op(), op);
    }
  };
  expect_mismatch([&] { return s - c; }, "other", "sub");
  expect_mismatch([&] { return c * s; }, "other", "mul");
  expect_mismatch([&] { return s / s1; }, "other", "div");
  expect_mismatch([&] { return maximum(s, c); }, "other", "maximum");
  expect_mismatch([&] { return s < c; }, "other", "lt");
  expect_mismatch([&] { return where(s > 0, s, c); }, "other", "where");
  expect_mismatch([&] { return where(c > 0, s, s); }, "self", "where");
  expect_mismatch([&] { return matmul(s, c); }, "other", "matmul");
  expect_mismatch([&] { return mm(c, s); }, "mat2", "mm");
  expect_mismatch([&] { return index_select(s, 0, idx.to("sim:1")); }, "index", "index_select");
  expect_mismatch([&] { return gather(s, 0, ones({2, 2}, TensorOptions().dtype(kInt64))); }, "index", "gather");
  expect_mismatch([&] { return cat({s, c}); }, "tensors[1]", "cat");
  expect_mismatch([&] { return stack({s, s, s1}); }, "tensors[2]", "stack");
  expect_mismatch([&] {
    Tensor t = s.clone();
    return t.add_(s1);
  }, "other", "add");
  // Checked before dtype and shape:
  expect_mismatch([&] { return s + ones({5}, TensorOptions().dtype(kInt8)); }, "other", "add");
}

TEST(HostAccess, ToVectorAndItemRules) {
  const Tensor s = randn({2}).to("sim:0");
  try {
    s.to_vector<float>();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("sim:0"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(".cpu()"), std::string::npos);
  }
  const Tensor g = randn({3, 3}, TensorOptions().requires_grad(true)).to("sim:0");
  EXPECT_TRUE(g.requires_grad());
  try {
    g.cpu().to_vector<float>();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(".detach()"), std::string::npos);
  }
  EXPECT_EQ(g.detach().cpu().to_vector<float>().size(), 9u);
  EXPECT_THROW(s.cpu().to_vector<double>(), DTypeError);
  EXPECT_FLOAT_EQ(s.sum().item<float>(), s.cpu().sum().item<float>());
  EXPECT_THROW(s.item<float>(), ValueError);
  EXPECT_NE(s.data_ptr<float>(), nullptr);
}

TEST(Printing, LooksLikePyTorch) {
  EXPECT_EQ(to_string(tensor({1.f, 2.f, 3.f})), "tensor([1., 2., 3.])");
  EXPECT_EQ(to_string(tensor({1.f, 2.f, 3.f}).to("sim:0")), "tensor([1., 2., 3.], device='sim:0')");
  EXPECT_EQ(to_string(tensor({1.5, 2.25}, kFloat64)), "tensor([1.5000, 2.2500], dtype=float64)");
  EXPECT_EQ(to_string(tensor({1.5, 2.25})), "tensor([1.5000, 2.2500])");  // a literal takes the default dtype
  EXPECT_EQ(to_string(tensor({1, 2})), "tensor([1, 2])");
  EXPECT_EQ(to_string(tensor({true, false})), "tensor([ True, False])");
  EXPECT_EQ(to_string(tensor(2.f)), "tensor(2.)");
  EXPECT_EQ(to_string(arange(4).reshape({2, 2})), "tensor([[0, 1],\n        [2, 3]])");
  EXPECT_EQ(to_string(ones({2}, TensorOptions().requires_grad(true))), "tensor([1., 1.], requires_grad=True)");
  EXPECT_NE(to_string(arange(5000)).find("..."), std::string::npos);
}

TEST(Memory, StatsExactAndBackToBaseline) {
  const Device d("sim:1");
  memory::empty_cache(d);
  const int64_t base = memory::memory_allocated(d);
  {
    Tensor a = empty({1000}, d);  // 4000 bytes -> one 4096-byte block
    EXPECT_EQ(memory::memory_allocated(d), base + 4096);
    EXPECT_GE(memory::memory_reserved(d), memory::memory_allocated(d));
    Tensor b = empty({3, 1 << 20}, d);  // 12 MiB: a large segment
    EXPECT_EQ(memory::memory_allocated(d), base + 4096 + (12 << 20));
    EXPECT_EQ(memory::memory_stats(d).requested_bytes.current, 4000 + (12 << 20));
  }
  EXPECT_EQ(memory::memory_allocated(d), base);
  EXPECT_GE(memory::max_memory_allocated(d), base + 4096 + (12 << 20));
  EXPECT_GT(memory::memory_reserved(d), 0);  // cached
  memory::empty_cache(d);
  EXPECT_EQ(memory::memory_reserved(d), 0);
  memory::reset_peak_memory_stats(d);
  EXPECT_EQ(memory::max_memory_allocated(d), base);
  EXPECT_NE(memory::memory_summary(d).find("Allocated memory"), std::string::npos);
  const auto [free_bytes, total] = memory::mem_get_info(d);
  EXPECT_EQ(free_bytes, total);
}

TEST(Memory, CpuLargeBuffersAreReused) {
  const Device c("cpu");
  const int64_t base = memory::memory_allocated(c);
  const void* first;
  {
    Tensor a = empty({1 << 24});
    first = a.data_ptr();
    EXPECT_EQ(memory::memory_allocated(c), base + (int64_t{64} << 20));
  }
  Tensor b = empty({1 << 24});
  EXPECT_EQ(b.data_ptr(), first);  // same pages, no fresh page faults
  EXPECT_GE(memory::memory_reserved(c), int64_t{64} << 20);
}

TEST(Memory, OutOfMemoryThenNormalWork) {
  sim::Config cfg = sim::config();
  sim::Config small = cfg;
  small.memory_bytes = uint64_t{64} << 20;
  sim::configure(small);
  const Device d("sim:0");
  {
    Tensor keep = empty({4 << 20}, d);  // 16 MiB
    try {
      empty({20 << 20}, d);  // 80 MiB
      FAIL();
    } catch (const OutOfMemoryError& e) {
      EXPECT_EQ(e.device(), d);
      EXPECT_EQ(e.requested(), uint64_t{80} << 20);
      EXPECT_EQ(e.capacity(), uint64_t{64} << 20);
      EXPECT_EQ(e.allocated(), uint64_t{16} << 20);
      const std::string msg = e.what();
      EXPECT_NE(msg.find("sim out of memory. Tried to allocate 80.00 MiB. sim:0 has a total capacity of 64.00 MiB"), std::string::npos) << msg;
    }
    EXPECT_EQ(memory::memory_stats(d).num_ooms, 1);
    Tensor more = ones({4 << 20}, d);  // normal work continues
    EXPECT_EQ(more.sum().item<float>(), float(4 << 20));
    EXPECT_THROW(sim::configure(cfg), ValueError) << "must refuse while tensors live";
  }
  EXPECT_EQ(memory::memory_allocated(d), 0);
  sim::configure(cfg);
}

TEST(Allocator, StreamOwnershipAndDeferredReuse) {
  // A fake device whose events complete only when told to.
  struct FakeMemory : runtime::RawMemory {
    bool done = false;
    int events = 0;
    void* allocate(size_t n) noexcept override { return std::malloc(n); }
    void free(void* p, size_t) noexcept override { std::free(p); }
    std::pair<uint64_t, uint64_t> mem_get_info() const override { return {0, 0}; }
    void* record_event(runtime::StreamId) override { ++events; return this; }
    bool event_done(void*) override { return done; }
  };
  auto raw = std::make_unique<FakeMemory>();
  FakeMemory* fake = raw.get();
  runtime::CachingAllocator alloc(Device("sim:0"), std::move(raw));
  void* first;
  {
    detail::DataPtr p = alloc.allocate(1000, /*stream=*/1);
    first = p.get();
    alloc.record_stream(p, 2);
  }
  EXPECT_EQ(fake->events, 1);
  EXPECT_EQ(alloc.stats().active_bytes.current, 1024);  // still in use by stream 2
  detail::DataPtr q = alloc.allocate(1000, 1);
  EXPECT_NE(q.get(), first);  // not handed out while stream 2 may read it
  fake->done = true;
  detail::DataPtr r = alloc.allocate(1000, 1);
  EXPECT_EQ(r.get(), first);
  detail::DataPtr other_stream = alloc.allocate(1000, 3);
  EXPECT_NE(other_stream.get(), first);
}

// A block freed while another stream still uses it waits on an event. empty_cache() and the
// out-of-memory ladder wait for such events (as PyTorch does) instead of leaving the block
// reserved, or failing an allocation the device could serve once the event completes.
TEST(Allocator, EmptyCacheAndOomWaitForPendingEvents) {
  // A fake device of 20 MiB whose events complete only when waited for.
  struct FakeMemory : runtime::RawMemory {
    size_t used = 0;
    int waits = 0;
    bool done = false;
    void* allocate(size_t n) noexcept override {
      if (used + n > (size_t{20} << 20)) return nullptr;
      used += n;
      return std::malloc(n);
    }
    void free(void* p, size_t n) noexcept override { used -= n, std::free(p); }
    std::pair<uint64_t, uint64_t> mem_get_info() const override { return {(size_t{20} << 20) - used, size_t{20} << 20}; }
    void* record_event(runtime::StreamId) override { return this; }
    bool event_done(void*) override { return done; }
    void wait_event(void*) noexcept override { ++waits, done = true; }
  };
  auto raw = std::make_unique<FakeMemory>();
  FakeMemory* fake = raw.get();
  runtime::CachingAllocator alloc(Device("sim:0"), std::move(raw));
  {
    detail::DataPtr p = alloc.allocate(size_t{12} << 20, /*stream=*/1);
    alloc.record_stream(p, 2);
  }
  // The 12 MiB block is pending; a second 12 MiB block does not fit beside it.
  detail::DataPtr q = alloc.allocate(size_t{12} << 20, 1);
  EXPECT_EQ(fake->waits, 1);
  EXPECT_EQ(alloc.stats().num_ooms, 0);
  q = detail::DataPtr();
  {
    fake->done = false;
    detail::DataPtr p = alloc.allocate(size_t{12} << 20, 1);
    alloc.record_stream(p, 2);
  }
  alloc.empty_cache();
  EXPECT_EQ(fake->waits, 2);
  EXPECT_EQ(alloc.stats().reserved_bytes.current, 0);
  EXPECT_EQ(fake->used, 0u);
}

TEST(Allocator, SplitCoalesceAndThreads) {
  runtime::CachingAllocator alloc(Device("sim:0"), std::make_unique<runtime::HostMemory>(uint64_t{1} << 30));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<detail::DataPtr> live;
      for (int i = 0; i < 500; ++i) {
        live.push_back(alloc.allocate(1 + rng() % (3 << 20)));
        if (live.size() > 24 || rng() % 3 == 0) live.erase(live.begin() + static_cast<long>(rng() % live.size()));
      }
    });
  for (auto& t : threads) t.join();
  const MemoryStats s = alloc.stats();
  EXPECT_EQ(s.allocated_bytes.current, 0);
  EXPECT_EQ(s.allocation.current, 0);
  EXPECT_EQ(s.requested_bytes.current, 0);
  alloc.empty_cache();
  EXPECT_EQ(alloc.stats().reserved_bytes.current, 0);  // every split block coalesced back
}

TEST(Fallback, PolicyThroughASimDeviceThatLacksAnOp) {
  sim::Config cfg = sim::config();
  sim::Config lacking = cfg;
  lacking.unsupported_ops = {"gelu:float32", "sum"};
  sim::configure(lacking);
  EXPECT_FALSE(supports("gelu", Device("sim:0"), kFloat32));
  EXPECT_TRUE(supports("gelu", Device("sim:0"), kFloat64));
  EXPECT_THROW(supports("nope", Device("cpu"), kFloat32), ValueError);
  {
  const Tensor x = tensor({-1.f, 0.f, 2.f}).to("sim:0");
  set_cpu_fallback(CpuFallback::Error);
  try {
    gelu(x);
    FAIL();
  } catch (const NotImplementedError& e) {
    // cuda has gelu too, listed where its kernels are in the process (its module loaded).
    const bool cuda_built = testing::cuda_kernels_loaded();
    EXPECT_EQ(std::string(e.what()), std::string("[locus::gelu] not implemented for device 'sim:0' (dtype float32). "
                                                 "Implemented for: cpu") +
                                         (cuda_built ? ", cuda" : "") +
                                         ". Set LOCUS_CPU_FALLBACK=warn to run it on the CPU.");
  }
  set_cpu_fallback(CpuFallback::Silent);
  const int64_t before = fallback_count("gelu");
  const Tensor y = gelu(x);
  EXPECT_EQ(y.device(), Device("sim:0"));
  EXPECT_EQ(fallback_count("gelu"), before + 1);
  expect_close(y, {-0.158655253931457, 0, 1.954499736103642});
  EXPECT_FLOAT_EQ(x.sum().item<float>(), 1.f);
  }
  set_cpu_fallback(CpuFallback::Error);
  sim::configure(cfg);
  EXPECT_TRUE(supports("gelu", Device("sim:0"), kFloat32));
}

TEST(Factories, EveryFactoryOnSim) {
  const Device d("sim:1");
  expect_close(zeros({2}, d), {0, 0});
  expect_close(ones({2}, d), {1, 1});
  expect_close(full({2}, 7, d), {7, 7});
  EXPECT_EQ(full({2}, 7).dtype(), kInt64);
  expect_close(arange(0, 1, 0.25, d), {0, 0.25, 0.5, 0.75});
  expect_close(linspace(0, 1, 5, d), {0, 0.25, 0.5, 0.75, 1});
  expect_close(eye(2, 3, d), {1, 0, 0, 0, 1, 0});
  manual_seed(9);
  const Tensor r1 = rand({1000}, d);
  manual_seed(9);
  const Tensor r2 = rand({1000});
  EXPECT_TRUE(equal(r1.cpu(), r2));  // same seed, same values on every device
  EXPECT_GE(r1.min().item<float>(), 0.f);
  EXPECT_LT(r1.max().item<float>(), 1.f);
  const Tensor n = randn({100000});
  EXPECT_NEAR(n.mean().item<double>(), 0, 0.02);
  EXPECT_NEAR(n.pow(2).mean().item<double>(), 1, 0.02);
  const Tensor ri = randint(3, 7, {1000}, d);
  EXPECT_EQ(ri.min().item<int64_t>(), 3);
  EXPECT_EQ(ri.max().item<int64_t>(), 6);
  float buf[4] = {1, 2, 3, 4};
  bool freed = false;
  {
    Tensor b = from_blob(buf, {2, 2}, kFloat32, [&](void*) { freed = true; });
    EXPECT_EQ(b.sum().item<float>(), 10.f);
  }
  EXPECT_TRUE(freed);
  EXPECT_EQ(zeros_like(r1).device(), d);
  EXPECT_EQ(ones_like(r1, kFloat64).dtype(), kFloat64);
  EXPECT_THROW(tensor(std::vector<float>{1.f, 2.f}, Shape{3}), ShapeError);
}

TEST(Pinned, PinMemoryUsesTheCachedHostPool) {
  const Tensor x = randn({1000});
  const Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_TRUE(p.pin_memory().is_same(p));
  EXPECT_TRUE(equal(p, x));
  EXPECT_GT(memory::host_pinned_memory_stats().allocated_bytes.current, 0);
  EXPECT_THROW(x.to("sim:0").pin_memory(), ValueError);
}

}  // namespace
}  // namespace locus
