// Gloo process groups with their ranks as threads of this process (Gloo's own tests do the
// same): every collective and dtype with 2 and 3 ranks, async handles, device tensors,
// argument errors, timeouts naming the absent rank, and the debug check of mismatched calls.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "tests/distributed/collective_cases.h"
#include "tests/distributed/rank_threads.h"

namespace locus {
namespace {

using distributed::ProcessGroup;
using distributed::ReduceOp;
using testing::values;

using testing::fresh_store;

// Runs body(group) on `n` ranks, one thread each; rethrows the first failure.
void on_ranks(int n, const std::function<void(ProcessGroup&)>& body,
              std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  testing::on_rank_threads(n, [&](std::shared_ptr<ProcessGroup> g) { body(*g); }, timeout);
}

TEST(Collectives, AllReduceEveryOpAndDtype) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  for (int n : {2, 3}) on_ranks(n, [](ProcessGroup& g) { testing::expect_all_reduce_every_op_and_dtype(g); });
}

// All-reduce splits a buffer into one part per rank (Note [Ring all-gather and all-reduce]):
// counts that do not divide, parts left empty (2 elements on 3 ranks) and a 4 MiB buffer must all
// give the sum, and the same bits on every rank.
TEST(Collectives, AllReduceOfAnySizeGivesTheSameSumOnEveryRank) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  for (int n : {2, 3})
    on_ranks(n, [n](ProcessGroup& g) {
      for (int64_t count : {int64_t{2}, int64_t{7}, int64_t{100003}, (int64_t{4} << 20) / 4 + 5}) {
        // rank r holds sin(0.37 i + r); the sum over ranks is computed here in float64
        const Tensor i = arange(0, count, 1, TensorOptions().dtype(kFloat64)) * 0.37;
        Tensor mine = (i + static_cast<double>(g.rank())).sin().to(kFloat32);
        Tensor want = zeros({count}, TensorOptions().dtype(kFloat64));
        for (int k = 0; k < n; ++k) want = want + (i + static_cast<double>(k)).sin().to(kFloat32).to(kFloat64);
        g.all_reduce(mine, ReduceOp::Sum)->wait();
        EXPECT_LT((mine.to(kFloat64) - want).abs().max().item<double>(), 1e-5) << count << " on " << n;
        Tensor everyone = empty({n * count});
        g.all_gather_into_tensor(everyone, mine)->wait();
        for (int k = 0; k < n; ++k)
          EXPECT_TRUE(equal(everyone.narrow(0, k * count, count), mine)) << "rank " << k << ", " << count << " on " << n;
      }
    });
}

TEST(Collectives, BroadcastGatherScatterAsyncOnDevices) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  on_ranks(3, [](ProcessGroup& g) {
    const int r = g.rank();
    // Device tensors go through the host: sim, and cuda where the machine has a GPU.
    const Device dev(r == 1 ? "sim:1" : r == 2 && cuda::is_available() ? "cuda:0" : "cpu");
    Tensor b = full({2, 2}, static_cast<double>(r + 10), TensorOptions().device(dev));
    g.broadcast(b, 2)->wait();
    EXPECT_EQ(values(b), std::vector<double>(4, 12));
    EXPECT_EQ(b.device(), dev);
    // A strided view takes part in place.
    Tensor base = zeros({3, 2}, TensorOptions().device(dev));
    Tensor column = base.select(1, 1);
    column.fill_(static_cast<double>(r));
    g.all_reduce(column)->wait();
    EXPECT_EQ(values(base), (std::vector<double>{0, 3, 0, 3, 0, 3}));
    std::vector<Tensor> gathered;
    for (int k = 0; k < 3; ++k) gathered.push_back(empty({2}, TensorOptions().dtype(kInt64).device(dev)));
    g.all_gather(gathered, tensor({r, 10 * r}).to(dev))->wait();
    for (int k = 0; k < 3; ++k) EXPECT_EQ(values(gathered[static_cast<size_t>(k)]), (std::vector<double>{k * 1.0, k * 10.0}));
    std::vector<Tensor> parts;
    for (int k = 0; k < 3; ++k) parts.push_back(full({2}, static_cast<double>(k + r), TensorOptions().device(dev)));
    Tensor mine = empty({2}, TensorOptions().device(dev));
    g.reduce_scatter(mine, parts)->wait();
    EXPECT_EQ(values(mine), std::vector<double>(2, 3.0 * r + 3));  // sum over k of (r + k)
    // Asynchronous: several in flight, completed in order.
    std::vector<Tensor> ts;
    std::vector<std::shared_ptr<distributed::Work>> works;
    for (int i = 0; i < 5; ++i) {
      ts.push_back(full({1000}, static_cast<double>(i)));
      works.push_back(g.all_reduce(ts.back()));
    }
    works.push_back(g.barrier());
    for (auto& w : works) w->wait();
    for (int i = 0; i < 5; ++i) EXPECT_EQ(values(ts[static_cast<size_t>(i)])[999], 3.0 * i);
    EXPECT_TRUE(works.front()->is_completed());
  });
}

TEST(Collectives, ArgumentErrorsAreRaisedBeforeAnythingIsSent) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  on_ranks(2, [](ProcessGroup& g) {
    Tensor ints = tensor({1, 2});
    try {
      g.all_reduce(ints, ReduceOp::Avg);
      FAIL();
    } catch (const DTypeError& e) {
      EXPECT_STREQ(e.what(), "all_reduce: ReduceOp::Avg needs a floating tensor, got int64");
    }
    Tensor x = ones({3});
    EXPECT_THROW(g.broadcast(x, 2), ValueError);
    std::vector<Tensor> wrong = {ones({3}), ones({4})};
    try {
      g.all_gather(wrong, x);
      FAIL();
    } catch (const ShapeError& e) {
      EXPECT_STREQ(e.what(), "all_gather: outputs[1] must be float32 [3], got float32 [4]");
    }
    std::vector<Tensor> one = {ones({3})};
    EXPECT_THROW(g.all_gather(one, x), ValueError);
    g.barrier()->wait();  // the group is still in step
  });
}

TEST(Collectives, ATimeoutNamesTheRankThatDidNotArrive) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  std::string message;
  std::atomic<int> finished{0};
  on_ranks(
      3,
      [&](ProcessGroup& g) {
        if (g.rank() == 2) {
          // Never joins the collective, but keeps its connections open until the others are done:
          // a rank that exits closes its sockets, and the others would then see a closed
          // connection instead of the timeout this test is about.
          while (finished.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
          return;
        }
        struct Done {
          std::atomic<int>& n;
          ~Done() { ++n; }
        } done{finished};
        Tensor x = ones({4});
        try {
          g.all_reduce(x)->wait();
          ADD_FAILURE() << "no timeout";
        } catch (const DistributedError& e) {
          if (g.rank() == 0) message = e.what();
        }
        Tensor y = ones({1});
        EXPECT_THROW(g.all_reduce(y)->wait(), DistributedError);  // the group stays failed
      },
      std::chrono::milliseconds(3000));  // long enough to connect on a loaded 2-core machine
  EXPECT_NE(message.find("all_reduce(float32 [4], sum) #0 failed on rank 0 after waiting up to 3000 ms; ranks that did not arrive: 2"),
            std::string::npos)
      << message;
}

TEST(Collectives, DebugModeNamesMismatchedCalls) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  ::setenv("LOCUS_DISTRIBUTED_DEBUG", "detail", 1);
  std::string message;
  try {
    on_ranks(2, [&](ProcessGroup& g) {
      Tensor x = ones({g.rank() == 0 ? 4 : 5});
      try {
        if (g.rank() == 0) g.all_reduce(x)->wait();
        else g.broadcast(x, 0)->wait();
        ADD_FAILURE() << "no mismatch found";
      } catch (const DistributedError& e) {
        if (g.rank() == 1) message = e.what();
      }
    });
  } catch (...) {
    ::unsetenv("LOCUS_DISTRIBUTED_DEBUG");
    throw;
  }
  ::unsetenv("LOCUS_DISTRIBUTED_DEBUG");
  EXPECT_EQ(message,
            "collective #0: the ranks called different collectives: rank 0 called all_reduce(float32 [4], sum); rank 1 "
            "called broadcast(float32 [5], root 0)");
}

TEST(Collectives, InitFromTheEnvironmentNeedsRankAndStore) {
  ::unsetenv("RANK");
  try {
    distributed::init_process_group("gloo", distributed::GroupOptions().world_size(1).store(fresh_store()));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("environment variable RANK expected, but not set"), std::string::npos) << e.what();
  }
  EXPECT_THROW(distributed::default_group(), ValueError);
  EXPECT_THROW(distributed::new_group("smoke"), ValueError);
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  distributed::init_process_group("gloo", distributed::GroupOptions().rank(0).world_size(1).store(fresh_store()));
  EXPECT_TRUE(distributed::is_initialized());
  EXPECT_EQ(distributed::get_world_size(), 1);
  Tensor x = tensor({1.5, 2.5});
  distributed::all_reduce(x);
  EXPECT_EQ(values(x), (std::vector<double>{1.5, 2.5}));
  EXPECT_THROW(distributed::init_process_group("gloo"), ValueError);
  distributed::destroy_process_group();
  EXPECT_FALSE(distributed::is_initialized());
  EXPECT_THROW(distributed::new_group("gloo", distributed::GroupOptions().rank(0).world_size(1).store("tcp://x")), ValueError);
}

}  // namespace
}  // namespace locus
