// NCCL process groups: every collective on one GPU (world size 1, all one GPU can host: NCCL
// refuses two ranks on one device), ordering against the caller's stream, memory back to
// baseline, argument errors, two ranks on one GPU named before NCCL fails, DDP over nccl; and
// with two GPUs, ranks as threads: sums across ranks, a timeout naming the absent rank, and
// DDP matching one process. Without a GPU, the group's absence is checked.

#include "tests/distributed/rank_threads.h"

namespace locus {
namespace {

using distributed::ProcessGroup;
using distributed::ReduceOp;
using testing::values;

#define SKIP_WITHOUT_NCCL_GPU(n)                                                                   \
  if (!distributed::is_available("nccl")) GTEST_SKIP() << "built without NCCL";                    \
  REQUIRE_CUDA();                                                                                  \
  if (cuda::device_count() < (n)) GTEST_SKIP() << "needs " << (n) << " GPUs"

std::shared_ptr<ProcessGroup> one_rank_group(const std::string& name = "test") {
  return distributed::new_group("nccl", distributed::GroupOptions()
                                            .store(testing::fresh_store())
                                            .rank(0)
                                            .world_size(1)
                                            .name(name)
                                            .timeout(std::chrono::seconds(20)));
}

TEST(NcclGroup, WithoutAGpuItSaysWhy) {
  if (!distributed::is_available("nccl")) GTEST_SKIP() << "built without NCCL";
  if (cuda::is_available()) GTEST_SKIP() << "this machine has a GPU";
  try {
    one_rank_group();
    FAIL() << "no error";
  } catch (const BackendUnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("process group 'test': nccl needs a CUDA device: "), std::string::npos) << e.what();
  }
}

TEST(NcclGroup, EveryCollectiveOnOneGpu) {
  SKIP_WITHOUT_NCCL_GPU(1);
  const Device gpu(DeviceType::CUDA, 0);
  cuda::synchronize();
  const int64_t baseline = cuda::memory_allocated(0);
  {
    auto g = one_rank_group();
    EXPECT_EQ(g->backend(), "nccl");
    EXPECT_EQ(g->size(), 1);
    for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kInt8, kUInt8}) {
      // Made on the caller's stream right before the collective: the group's stream must wait for it.
      Tensor x = (arange(0, 1 << 20, 1, TensorOptions().device(gpu)).remainder(7) + 1).to(dt);
      const std::vector<double> expected = values(x);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Product}) {
        g->all_reduce(x, op)->wait();
        EXPECT_EQ(values(x), expected) << dtype_name(dt);
      }
      if (is_floating_point(dt)) {
        g->all_reduce(x, ReduceOp::Avg)->wait();
        EXPECT_EQ(values(x), expected) << dtype_name(dt);
      }
      g->broadcast(x, 0)->wait();
      std::vector<Tensor> gathered = {empty_like(x)};
      g->all_gather(gathered, x)->wait();
      EXPECT_EQ(values(gathered[0]), expected) << dtype_name(dt);
      Tensor out = empty_like(x);
      g->reduce_scatter(out, {x}, ReduceOp::Sum)->wait();
      EXPECT_EQ(values(out), expected) << dtype_name(dt);
    }
    // Work queued after an async collective on the caller's stream sees its result.
    Tensor y = full({4096}, 3.0, TensorOptions().device(gpu));
    auto work = g->all_reduce(y);
    work->wait();                          // orders the caller's stream after it; the host goes on
    EXPECT_EQ(values(y * 2)[4095], 6.0);  // copying to the host waited for the stream
    EXPECT_TRUE(work->is_completed());
    g->barrier()->wait();
  }
  cuda::synchronize();
  EXPECT_EQ(cuda::memory_allocated(0), baseline);
}

TEST(NcclGroup, ArgumentErrorsAreTypedAndLeaveTheGroupWorking) {
  SKIP_WITHOUT_NCCL_GPU(1);
  const Device gpu(DeviceType::CUDA, 0);
  auto g = one_rank_group();
  Tensor on_cpu = ones({4});
  try {
    g->all_reduce(on_cpu);
    FAIL() << "no error";
  } catch (const DeviceMismatchError& e) {
    EXPECT_EQ(e.op(), "all_reduce");
    EXPECT_EQ(e.first(), gpu);
    EXPECT_EQ(e.second(), Device(DeviceType::CPU));
  }
  Tensor strided = ones({4, 4}, TensorOptions().device(gpu)).t();
  EXPECT_THROW(g->all_reduce(strided), ValueError);
  Tensor shorts = ones({4}, TensorOptions().dtype(kInt16).device(gpu));
  try {
    g->all_reduce(shorts);
    FAIL() << "no error";
  } catch (const DTypeError& e) {
    EXPECT_EQ(std::string(e.what()), "all_reduce: NCCL has no int16 type; convert the tensor or use a gloo group");
  }
  Tensor ints = ones({4}, TensorOptions().dtype(kInt64).device(gpu));
  EXPECT_THROW(g->all_reduce(ints, ReduceOp::Avg), DTypeError);
  EXPECT_THROW(g->broadcast(ints, 1), ValueError);
  std::vector<Tensor> two = {empty_like(ints), empty_like(ints)};
  EXPECT_THROW(g->all_gather(two, ints), ValueError);
  std::vector<Tensor> wrong = {ones({5}, TensorOptions().dtype(kInt64).device(gpu))};
  EXPECT_THROW(g->all_gather(wrong, ints), ShapeError);
  Tensor x = ones({4}, TensorOptions().device(gpu));
  g->all_reduce(x)->wait();  // still usable
  EXPECT_EQ(values(x), std::vector<double>(4, 1.0));
}

TEST(NcclGroup, TwoRanksOnOneGpuAreNamed) {
  SKIP_WITHOUT_NCCL_GPU(1);
  std::atomic<int> named{0};
  try {
    testing::on_rank_threads(
        2, [](std::shared_ptr<ProcessGroup>) { ADD_FAILURE() << "joined"; }, std::chrono::seconds(20), "nccl",
        [](int) { return 0; });
  } catch (const DistributedError& e) {
    EXPECT_NE(std::string(e.what()).find("ranks 0 and 1 use the same GPU"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuda::set_device(local rank)"), std::string::npos) << e.what();
    ++named;
  }
  EXPECT_EQ(named.load(), 1);
}

TEST(NcclGroup, DistributedDataParallelOnOneGpuTrainsAsThePlainModel) {
  SKIP_WITHOUT_NCCL_GPU(1);
  const Device gpu(DeviceType::CUDA, 0);
  manual_seed(3);
  nn::Sequential plain{nn::Linear(10, 16), nn::ReLU(), nn::Linear(16, 4)};
  plain->to(gpu);
  manual_seed(3);
  nn::Sequential wrapped{nn::Linear(10, 16), nn::ReLU(), nn::Linear(16, 4)};
  wrapped->to(gpu);
  manual_seed(4);
  const Tensor x = randn({32, 10}).to(gpu), y = randint(0, 4, {32}).to(gpu);
  nn::DistributedDataParallel ddp(wrapped, one_rank_group());
  optim::SGD a(plain->parameters(), 0.1), b(wrapped->parameters(), 0.1);
  for (int step = 0; step < 3; ++step) {
    a.zero_grad();
    b.zero_grad();
    nn::functional::cross_entropy(plain(x), y).backward();
    nn::functional::cross_entropy(ddp(x), y).backward();
    a.step();
    b.step();
  }
  const auto p = plain->parameters(), q = wrapped->parameters();
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(values(p[i]), values(q[i])) << i;
}

TEST(NcclGroup, TwoGpusSumGatherAndScatter) {
  SKIP_WITHOUT_NCCL_GPU(2);
  testing::on_rank_threads(
      2,
      [](std::shared_ptr<ProcessGroup> g) {
        const int r = g->rank();
        const Device gpu(DeviceType::CUDA, r);
        Tensor x = tensor({r + 1.0, 10.0 * (r + 1)}).to(gpu);
        g->all_reduce(x)->wait();
        EXPECT_EQ(values(x), (std::vector<double>{3, 30}));
        Tensor b = full({3}, r + 5.0, TensorOptions().device(gpu));
        g->broadcast(b, 1)->wait();
        EXPECT_EQ(values(b), std::vector<double>(3, 6.0));
        std::vector<Tensor> parts = {empty({2}, TensorOptions().device(gpu)), empty({2}, TensorOptions().device(gpu))};
        g->all_gather(parts, full({2}, double(r), TensorOptions().device(gpu)))->wait();
        EXPECT_EQ(values(parts[1]), std::vector<double>(2, 1.0));
        Tensor out = empty({2}, TensorOptions().device(gpu));
        g->reduce_scatter(out, {full({2}, 1.0 + r, TensorOptions().device(gpu)), full({2}, 10.0 + r, TensorOptions().device(gpu))})->wait();
        EXPECT_EQ(values(out), std::vector<double>(2, r == 0 ? 3.0 : 21.0));
      },
      std::chrono::seconds(20), "nccl");
}

TEST(NcclGroup, ATimeoutNamesTheRankThatDidNotArrive) {
  SKIP_WITHOUT_NCCL_GPU(2);
  std::string message;
  std::atomic<int> finished{0};
  testing::on_rank_threads(
      2,
      [&](std::shared_ptr<ProcessGroup> g) {
        if (g->rank() == 1) {  // keeps the group open, never joins the collective
          while (finished.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(10));
          return;
        }
        Tensor x = ones({4}, TensorOptions().device(Device(DeviceType::CUDA, 0)));
        g->all_reduce(x)->wait();  // returns: the host does not wait for NCCL
        cuda::synchronize(0);      // returns once the watchdog aborts the communicator
        try {
          g->all_reduce(x);
          ADD_FAILURE() << "the aborted group took a collective";
        } catch (const DistributedError& e) {
          message = e.what();
        }
        ++finished;
      },
      std::chrono::milliseconds(3000), "nccl");
  EXPECT_NE(message.find("process group unusable: all_reduce(float32 [4], sum) #0 failed on rank 0 after waiting up to "
                         "3000 ms; ranks that did not arrive: 1"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace locus
