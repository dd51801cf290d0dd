// DistributedDataParallel with its ranks as threads of this process: two ranks of batch 32
// train as one process of batch 64 (SGD and Adam), buckets, no_sync accumulation, unused
// parameters named, every rank starting from rank 0's values.

#include "tests/distributed/rank_threads.h"

namespace locus {
namespace {

using testing::values;

void on_ranks(int n, const std::function<void(std::shared_ptr<distributed::ProcessGroup>)>& body) {
  testing::on_rank_threads(n, body);
}

nn::Sequential make_model(uint64_t seed) {
  manual_seed(seed);
  return nn::Sequential{nn::Linear(10, 16), nn::ReLU(), nn::Linear(16, 4)};
}

struct Data {
  Tensor x, y;
};
Data make_data() {
  manual_seed(99);
  return {randn({64, 10}), randint(0, 4, {64})};
}

std::unique_ptr<optim::Optimizer> make_opt(const std::string& kind, const std::vector<Tensor>& params) {
  if (kind == "sgd") return std::make_unique<optim::SGD>(params, optim::SGDOptions(0.1).momentum(0.9));
  return std::make_unique<optim::Adam>(params, 0.01);
}

TEST(DistributedDataParallel, TwoRanksOfHalfTheBatchTrainAsOneProcess) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  const Data d = make_data();
  for (const std::string kind : {"sgd", "adam"}) {
    auto single = make_model(1);
    auto opt = make_opt(kind, single->parameters());
    for (int step = 0; step < 4; ++step) {
      opt->zero_grad();
      nn::functional::cross_entropy(single(d.x), d.y).backward();
      opt->step();
    }
    std::vector<std::vector<double>> results(2);
    // Built here: the global generator is not for threads racing on one seed.
    const std::vector<nn::Sequential> models = {make_model(1), make_model(2)};  // rank 1 starts elsewhere
    on_ranks(2, [&](std::shared_ptr<distributed::ProcessGroup> g) {
      const int r = g->rank();
      auto model = models[static_cast<size_t>(r)];  // DDP copies rank 0's values into rank 1
      nn::DistributedDataParallel ddp(model, g, nn::DistributedDataParallelOptions().bucket_cap_mb(0.0005));
      EXPECT_GT(ddp->bucket_names().size(), 1u);  // several buckets, so several overlapping all-reduces
      auto o = make_opt(kind, model->parameters());
      const Tensor x = d.x.narrow(0, 32 * r, 32), y = d.y.narrow(0, 32 * r, 32);
      for (int step = 0; step < 4; ++step) {
        o->zero_grad();
        nn::functional::cross_entropy(ddp(x), y).backward();
        o->step();
      }
      std::vector<double> flat;
      for (const Tensor& p : model->parameters())
        for (double v : values(p)) flat.push_back(v);
      results[static_cast<size_t>(r)] = flat;
    });
    std::vector<double> want;
    for (const Tensor& p : single->parameters())
      for (double v : values(p)) want.push_back(v);
    ASSERT_EQ(results[0].size(), want.size());
    EXPECT_EQ(results[0], results[1]) << kind;  // the ranks agree exactly
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(results[0][i], want[i], 1e-5) << kind << " " << i;
  }
}

TEST(DistributedDataParallel, GlooCarriesCudaGradients) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  REQUIRE_CUDA();
  const Device gpu("cuda:0");
  const Data d = make_data();
  auto single = make_model(1);
  single->to(gpu);
  optim::SGD opt(single->parameters(), 0.1);
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    nn::functional::cross_entropy(single(d.x.to(gpu)), d.y.to(gpu)).backward();
    opt.step();
  }
  std::vector<nn::Sequential> models = {make_model(1), make_model(2)};
  for (auto& m : models) m->to(gpu);
  std::vector<std::vector<double>> results(2);
  on_ranks(2, [&](std::shared_ptr<distributed::ProcessGroup> g) {
    const int r = g->rank();
    auto model = models[static_cast<size_t>(r)];
    nn::DistributedDataParallel ddp(model, g);
    optim::SGD o(model->parameters(), 0.1);
    const Tensor x = d.x.narrow(0, 32 * r, 32).to(gpu), y = d.y.narrow(0, 32 * r, 32).to(gpu);
    for (int step = 0; step < 3; ++step) {
      o.zero_grad();
      nn::functional::cross_entropy(ddp(x), y).backward();
      o.step();
    }
    for (const Tensor& p : model->parameters())
      for (double v : values(p)) results[static_cast<size_t>(r)].push_back(v);
  });
  std::vector<double> want;
  for (const Tensor& p : single->parameters())
    for (double v : values(p)) want.push_back(v);
  ASSERT_EQ(results[0].size(), want.size());
  EXPECT_EQ(results[0], results[1]);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(results[0][i], want[i], 1e-5) << i;
}

TEST(DistributedDataParallel, NoSyncAccumulatesAndUnusedParametersAreNamed) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  const Data d = make_data();
  // One process: the gradient of the whole batch of 64.
  auto single = make_model(1);
  nn::functional::cross_entropy(single(d.x), d.y).backward();
  const std::vector<double> want = values(single->parameters()[0].grad());
  const std::vector<nn::Sequential> models = {make_model(1), make_model(1)};
  on_ranks(2, [&](std::shared_ptr<distributed::ProcessGroup> g) {
    const int r = g->rank();
    auto model = models[static_cast<size_t>(r)];
    nn::DistributedDataParallel ddp(model, g);
    // Two micro-batches of 16 per rank: the first without synchronizing.
    for (int micro = 0; micro < 2; ++micro) {
      const Tensor x = d.x.narrow(0, 32 * r + 16 * micro, 16), y = d.y.narrow(0, 32 * r + 16 * micro, 16);
      if (micro == 0) {
        nn::NoSyncGuard no_sync(*ddp);
        (nn::functional::cross_entropy(ddp(x), y) * 0.5).backward();
      } else {
        (nn::functional::cross_entropy(ddp(x), y) * 0.5).backward();
      }
    }
    const std::vector<double> got = values(model->parameters()[0].grad());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6);
    // A layer the output does not use.
    struct TwoHeadsImpl : nn::Module {
      TwoHeadsImpl() {
        a = register_module("a", nn::Linear(10, 4));
        b = register_module("b", nn::Linear(10, 4));
      }
      Tensor forward(const Tensor& x) override { return a(x); }
      nn::Linear a{nullptr}, b{nullptr};
    };
    auto heads = std::make_shared<TwoHeadsImpl>();
    nn::DistributedDataParallel strict(heads, g);
    try {
      (void)strict(d.x);
      ADD_FAILURE() << "no error";
    } catch (const DistributedError& e) {
      EXPECT_NE(std::string(e.what()).find("would get no gradient, and the ranks would wait for it forever: b.weight, b.bias"),
                std::string::npos)
          << e.what();
    }
    nn::DistributedDataParallel lenient(heads, g, nn::DistributedDataParallelOptions().find_unused_parameters(true));
    nn::functional::cross_entropy(lenient(d.x.narrow(0, 32 * r, 32)), d.y.narrow(0, 32 * r, 32)).backward();
    EXPECT_EQ(values(heads->b->weight.grad()), std::vector<double>(40, 0.0));  // reduced as zeros
    EXPECT_TRUE(heads->a->weight.grad().defined());
  });
}

}  // namespace
}  // namespace locus

namespace locus {
namespace {

// A model with BatchNorm trains under DDP: rank 1 starts with other weights and other running
// statistics, DDP brings both from rank 0 (broadcast_buffers, PyTorch's default), the ranks'
// parameters stay equal step after step, and each rank's statistics count its own batches.
TEST(DistributedDataParallel, BatchNormBuffersComeFromRankZero) {
  if (!distributed::is_available("gloo")) GTEST_SKIP() << "built without Gloo";
  const auto make = [](uint64_t seed) {
    manual_seed(seed);
    return nn::Sequential{nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4), nn::ReLU(),
                          nn::Flatten(), nn::Linear(4 * 6 * 6, 3)};
  };
  const std::vector<nn::Sequential> models = {make(1), make(2)};
  {
    NoGradGuard no_grad;
    auto* bn = dynamic_cast<nn::BatchNorm2dImpl*>((*models[1])[1].get());
    bn->running_mean.fill_(100.0);  // far from anything rank 0 holds
  }
  manual_seed(7);
  const Tensor x = randn({8, 1, 6, 6}), y = randint(0, 3, {8});
  std::vector<std::vector<double>> params(2), means(2);
  std::vector<int64_t> counts(2);
  on_ranks(2, [&](std::shared_ptr<distributed::ProcessGroup> g) {
    const int r = g->rank();
    auto model = models[static_cast<size_t>(r)];
    nn::DistributedDataParallel ddp(model, g);
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
    const Tensor xr = x.narrow(0, 4 * r, 4), yr = y.narrow(0, 4 * r, 4);
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      nn::functional::cross_entropy(ddp(xr), yr).backward();
      opt.step();
    }
    for (const Tensor& p : model->parameters())
      for (double v : values(p)) params[static_cast<size_t>(r)].push_back(v);
    const auto state = model->state_dict();
    means[static_cast<size_t>(r)] = values(state["1.running_mean"]);
    counts[static_cast<size_t>(r)] = state["1.num_batches_tracked"].item<int64_t>();
  });
  EXPECT_EQ(params[0], params[1]);
  EXPECT_EQ(counts[0], 3);
  EXPECT_EQ(counts[1], 3);
  for (double m : means[1]) EXPECT_LT(std::abs(m), 10.0) << "rank 1 kept its own running_mean of 100";
}

}  // namespace
}  // namespace locus
