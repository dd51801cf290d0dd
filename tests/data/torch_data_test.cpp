// LibTorch's data pipeline (torch::data): MNIST, transforms, samplers, make_data_loader and its
// workers.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <fstream>
#include <numeric>
#include <set>
#include <stdexcept>

#include "tests/test_util.h"

namespace locus {
namespace {

using testing::values;
namespace datasets = data::datasets;
namespace samplers = data::samplers;
namespace transforms = data::transforms;

bool fashion_mnist_installed() {
  return static_cast<bool>(std::ifstream(std::string(data::kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz"));
}

TEST(TorchData, MnistMatchesTheIdxFiles) {
  if (!fashion_mnist_installed()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string dir = data::kFashionMnistDir;
  datasets::MNIST train(dir);
  datasets::MNIST test(dir, datasets::MNIST::Mode::kTest);
  EXPECT_TRUE(train.is_train());
  EXPECT_FALSE(test.is_train());
  EXPECT_EQ(train.size().value(), 60000u);
  EXPECT_EQ(test.size().value(), 10000u);
  EXPECT_EQ(test.images().shape(), (Shape{10000, 1, 28, 28}));
  EXPECT_EQ(test.images().dtype(), kFloat32);
  EXPECT_EQ(test.targets().shape(), (Shape{10000}));
  EXPECT_EQ(test.targets().dtype(), kInt64);

  const Tensor raw_images = data::read_idx(dir + "/train-images-idx3-ubyte.gz");
  const Tensor raw_labels = data::read_idx(dir + "/train-labels-idx1-ubyte.gz");
  const data::Example<> first = train.get(0);
  EXPECT_EQ(first.data.shape(), (Shape{1, 28, 28}));
  EXPECT_EQ(values(first.data), values(div(raw_images[0].to(kFloat32), 255.0).view({1, 28, 28})));
  EXPECT_EQ(first.target.item<int64_t>(), raw_labels[0].to(kInt64).item<int64_t>());
  const Tensor last_label = data::read_idx(dir + "/t10k-labels-idx1-ubyte.gz")[9999];
  EXPECT_EQ(test.get(9999).target.item<int64_t>(), last_label.to(kInt64).item<int64_t>());
  EXPECT_THROW(train.get(60000), IndexError);
}

TEST(TorchData, MnistNamesTheMissingFile) {
  const std::string dir = ::testing::TempDir() + "/no_mnist_here";
  try {
    datasets::MNIST(dir, datasets::MNIST::Mode::kTest);
    FAIL() << "no IOError";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/t10k-images-idx3-ubyte"), std::string::npos) << e.what();
  }
}

// Example i: data [2] = {i, 10 * i} (float32), target i (int64).
struct Numbers : datasets::Dataset<Numbers> {
  explicit Numbers(size_t n, size_t throw_at = SIZE_MAX) : n(n), throw_at(throw_at) {}
  data::Example<> get(size_t index) override {
    if (index == throw_at) throw std::domain_error("no example " + std::to_string(index));
    const double i = static_cast<double>(index);
    return {tensor(std::vector<double>{i, 10 * i}, kFloat32), tensor(static_cast<int64_t>(index))};
  }
  std::optional<size_t> size() const override { return n; }
  size_t n, throw_at;
};

TEST(TorchData, NormalizeIsPerChannel) {
  transforms::Normalize<> scalar(0.5, 0.25);
  EXPECT_EQ(values(scalar(tensor({1.0f, 0.0f}).view({1, 1, 2}))), (std::vector<double>{2, -2}));
  transforms::Normalize<> per_channel({1.0, 2.0}, {2.0, 4.0});
  const Tensor image = full({2, 1, 2}, 3.0f);
  EXPECT_EQ(per_channel.mean.shape(), (Shape{2, 1, 1}));
  EXPECT_EQ(values(per_channel(image)), (std::vector<double>{1, 1, 0.25, 0.25}));
  // As a Transform it rewrites the data and keeps the target.
  data::Example<> e = scalar.apply({tensor({0.75f}).view({1, 1, 1}), tensor(int64_t{7})});
  EXPECT_EQ(values(e.data), (std::vector<double>{1}));
  EXPECT_EQ(e.target.item<int64_t>(), 7);
}

TEST(TorchData, StackMakesOneBatch) {
  Numbers ds(5);
  std::vector<data::Example<>> batch = ds.get_batch({4, 1, 2});
  ASSERT_EQ(batch.size(), 3u);
  const data::Example<> stacked = transforms::Stack<>().apply_batch(batch);
  EXPECT_EQ(stacked.data.shape(), (Shape{3, 2}));
  EXPECT_EQ(stacked.data.dtype(), kFloat32);
  EXPECT_EQ(stacked.target.shape(), (Shape{3}));
  EXPECT_EQ(stacked.target.dtype(), kInt64);
  EXPECT_EQ(values(stacked.target), (std::vector<double>{4, 1, 2}));
  EXPECT_EQ(values(stacked.data), (std::vector<double>{4, 40, 1, 10, 2, 20}));

  datasets::TensorDataset rows(arange(12).view({4, 3}));
  EXPECT_EQ(rows.size().value(), 4u);
  const data::TensorExample rows_batch = transforms::Stack<data::TensorExample>().apply_batch(rows.get_batch({3, 0}));
  EXPECT_EQ(values(rows_batch.data), (std::vector<double>{9, 10, 11, 0, 1, 2}));
  const Tensor& as_tensor = rows_batch;
  EXPECT_EQ(as_tensor.shape(), (Shape{2, 3}));
}

TEST(TorchData, CustomDatasetWithLambdaAndMap) {
  auto ds = Numbers(6)
                .map(transforms::Lambda<data::Example<>>([](data::Example<> e) {
                  e.data = e.data + 1;
                  e.target = e.target * 2;
                  return e;
                }))
                .map(transforms::Stack<>());
  static_assert(std::is_same_v<decltype(ds)::BatchType, data::Example<>>);
  EXPECT_EQ(ds.size().value(), 6u);
  EXPECT_EQ(ds.dataset().dataset().n, 6u);
  const data::Example<> batch = ds.get_batch({5, 0});
  EXPECT_EQ(values(batch.data), (std::vector<double>{6, 51, 1, 1}));
  EXPECT_EQ(values(batch.target), (std::vector<double>{10, 0}));

  auto mapped = datasets::map(Numbers(3), transforms::BatchLambda<std::vector<data::Example<>>, size_t>(
                                              [](std::vector<data::Example<>> b) { return b.size(); }));
  EXPECT_EQ(mapped.get_batch({0, 1, 2}), 3u);
  auto tensor_lambda = Numbers(2).map(transforms::TensorLambda<>([](Tensor t) { return t * 3; }));
  EXPECT_EQ(values(tensor_lambda.get_batch({1})[0].data), (std::vector<double>{3, 30}));
}

std::vector<size_t> drain(samplers::Sampler<>& sampler, size_t batch_size, std::vector<size_t>* sizes = nullptr) {
  std::vector<size_t> all;
  while (const auto batch = sampler.next(batch_size)) {
    all.insert(all.end(), batch->begin(), batch->end());
    if (sizes) sizes->push_back(batch->size());
  }
  return all;
}

TEST(TorchData, SequentialSampler) {
  samplers::SequentialSampler s(7);
  std::vector<size_t> sizes;
  EXPECT_EQ(drain(s, 3, &sizes), (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 1}));
  EXPECT_FALSE(s.next(3).has_value());
  s.reset(2);
  EXPECT_EQ(drain(s, 5), (std::vector<size_t>{0, 1}));
}

TEST(TorchData, RandomSamplerIsAReproduciblePermutation) {
  manual_seed(123);
  samplers::RandomSampler s(50);
  const std::vector<size_t> first = drain(s, 8);
  s.reset();
  const std::vector<size_t> second = drain(s, 8);
  std::vector<size_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> iota(50);
  std::iota(iota.begin(), iota.end(), size_t{0});
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(first, iota);
  EXPECT_NE(first, second);  // a new permutation per reset

  manual_seed(123);
  samplers::RandomSampler again(50, kInt32);
  EXPECT_EQ(drain(again, 7), first);
  again.reset();
  EXPECT_EQ(drain(again, 50), second);
}

TEST(TorchData, DistributedRandomSamplerShards) {
  for (const bool pad : {true, false}) {
    for (const size_t size : {12u, 10u}) {
      std::multiset<size_t> seen;
      std::set<size_t> distinct;
      for (size_t rank = 0; rank < 3; ++rank) {
        samplers::DistributedRandomSampler s(size, 3, rank, pad);
        s.set_epoch(4);
        s.reset();
        const std::vector<size_t> shard = drain(s, 2);
        EXPECT_EQ(shard.size(), pad ? (size + 2) / 3 : size / 3);
        seen.insert(shard.begin(), shard.end());
        distinct.insert(shard.begin(), shard.end());
      }
      // Disjoint shards: nothing repeats but the padding.
      EXPECT_EQ(seen.size() - distinct.size(), pad ? (3 - size % 3) % 3 : 0u);
      if (pad) {
        EXPECT_EQ(distinct.size(), size);  // covering
      }
      for (size_t i : distinct) EXPECT_LT(i, size);
    }
  }
  samplers::DistributedRandomSampler a(20, 2, 1), b(20, 2, 1);
  a.set_epoch(1);
  a.reset();
  b.set_epoch(2);
  b.reset();
  EXPECT_NE(drain(a, 20), drain(b, 20));
  EXPECT_THROW(samplers::DistributedRandomSampler(5, 2, 2), ValueError);

  samplers::DistributedSequentialSampler seq(5, 2, 1);
  EXPECT_EQ(drain(seq, 2), (std::vector<size_t>{3, 4, 0}));
}

std::vector<std::vector<double>> targets_of(data::DataLoaderOptions options, size_t n = 23) {
  auto loader = data::make_data_loader<samplers::SequentialSampler>(Numbers(n).map(transforms::Stack<>()), options);
  std::vector<std::vector<double>> batches;
  for (data::Example<>& batch : *loader) {
    EXPECT_EQ(batch.data.size(0), batch.target.size(0));
    batches.push_back(values(batch.target));
  }
  return batches;
}

TEST(TorchData, LoaderBatchesAndDropLast) {
  const auto batches = targets_of(data::DataLoaderOptions(5));
  ASSERT_EQ(batches.size(), 5u);
  EXPECT_EQ(batches[0], (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(batches[4], (std::vector<double>{20, 21, 22}));
  EXPECT_EQ(targets_of(data::DataLoaderOptions(5).drop_last(true)).size(), 4u);
  EXPECT_EQ(targets_of(data::DataLoaderOptions(5).drop_last(true), 20).size(), 4u);
  EXPECT_EQ(targets_of(data::DataLoaderOptions(5).drop_last(true).workers(2), 24).size(), 4u);
  EXPECT_THROW(data::make_data_loader(Numbers(3), data::DataLoaderOptions(2).shuffle(true)), ValueError);
  EXPECT_THROW(data::make_data_loader(Numbers(3), 0), ValueError);
}

TEST(TorchData, WorkersDeliverTheSameBatchesInOrder) {
  const auto serial = targets_of(data::DataLoaderOptions(3));
  for (const size_t workers : {1u, 2u, 4u}) {
    EXPECT_EQ(targets_of(data::DataLoaderOptions(3).workers(workers)), serial);
    EXPECT_EQ(targets_of(data::DataLoaderOptions(3).workers(workers).max_jobs(1)), serial);
  }
  // RandomSampler under the same seed: the same order with and without workers, and a second
  // epoch draws a new one.
  auto epochs = [](size_t workers) {
    manual_seed(7);
    auto loader = data::make_data_loader(Numbers(17), data::DataLoaderOptions(4).workers(workers));
    std::vector<size_t> order;
    for (int epoch = 0; epoch < 2; ++epoch)
      for (const std::vector<data::Example<>>& batch : *loader)
        for (const data::Example<>& e : batch) order.push_back(static_cast<size_t>(e.target.item<int64_t>()));
    return order;
  };
  const std::vector<size_t> order = epochs(0);
  ASSERT_EQ(order.size(), 34u);
  EXPECT_NE(std::vector<size_t>(order.begin(), order.begin() + 17), std::vector<size_t>(order.begin() + 17, order.end()));
  EXPECT_EQ(epochs(2), order);
}

TEST(TorchData, WorkerExceptionReachesTheIteratingThread) {
  for (const size_t workers : {0u, 2u}) {
    auto loader = data::make_data_loader<samplers::SequentialSampler>(Numbers(20, 9).map(transforms::Stack<>()),
                                                                       data::DataLoaderOptions(4).workers(workers));
    std::vector<double> firsts;
    try {
      for (auto& batch : *loader) firsts.push_back(batch.target[0].item<double>());
      FAIL() << "no exception";
    } catch (const std::domain_error& e) {
      EXPECT_STREQ(e.what(), "no example 9");
    }
    EXPECT_EQ(firsts, (std::vector<double>{0, 4}));  // the batches before the failing one
  }
}

TEST(TorchData, EarlyBreakAndDestructionJoin) {
  std::atomic<int> made{0};
  struct Counting : datasets::Dataset<Counting> {
    explicit Counting(std::atomic<int>* made) : made(made) {}
    data::Example<> get(size_t index) override {
      ++*made;
      return {tensor(static_cast<int64_t>(index)), tensor(static_cast<int64_t>(index))};
    }
    std::optional<size_t> size() const override { return 1000; }
    std::atomic<int>* made;
  };
  for (int round = 0; round < 3; ++round) {
    auto loader = data::make_data_loader<samplers::SequentialSampler>(Counting(&made).map(transforms::Stack<>()),
                                                                       data::DataLoaderOptions(2).workers(3));
    int seen = 0;
    for (auto& batch : *loader) {
      EXPECT_EQ(batch.data.size(0), 2);
      if (++seen == 2) break;
    }
    // A second epoch restarts, abandoning the first.
    auto it = loader->begin();
    EXPECT_EQ(it->target[0].item<int64_t>(), 0);
  }  // the loader is destroyed with its workers mid-epoch
  EXPECT_LT(made.load(), 3000);
}

// get(1) waits until the gate opens; every other example is ready at once.
struct Gated : datasets::Dataset<Gated> {
  struct Gate {
    std::mutex mutex;
    std::condition_variable cv;
    bool open = false;
  };
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  data::Example<> get(size_t index) override {
    if (index == 1) {
      std::unique_lock lock(gate->mutex);
      gate->cv.wait(lock, [&] { return gate->open; });
    }
    return {tensor(static_cast<int64_t>(index)), tensor(static_cast<int64_t>(index))};
  }
  std::optional<size_t> size() const override { return 3; }
};

TEST(TorchData, TimeoutThrowsAndTheNextStepWaitsAgain) {
  Gated ds;
  const std::shared_ptr<Gated::Gate> gate = ds.gate;
  auto loader = data::make_data_loader<samplers::SequentialSampler>(
      ds.map(transforms::Stack<>()),
      data::DataLoaderOptions(1).workers(1).max_jobs(1).timeout(std::chrono::milliseconds(50)));
  // A loaded machine may not make batch 0 within the timeout; begin() then starts over. With
  // max_jobs 1 the worker never starts batch 1 before it is asked for, so starting over (which
  // joins the worker) cannot wait on the closed gate.
  std::optional<decltype(loader->begin())> first;
  while (!first) {
    try {
      first = loader->begin();
    } catch (const Error&) {
    }
  }
  auto it = *first;
  EXPECT_EQ(it->target.item<int64_t>(), 0);
  // Batch 1 cannot be ready: its get() waits for the gate, which only this thread opens.
  EXPECT_THROW(++it, Error);
  {
    std::lock_guard lock(gate->mutex);
    gate->open = true;
  }
  gate->cv.notify_all();
  std::vector<int64_t> rest;
  for (;;) {
    try {
      ++it;
    } catch (const Error&) {
      continue;  // the timeout may pass again on a loaded machine before the batch is made
    }
    if (it == loader->end()) break;
    rest.push_back(it->target.item<int64_t>());
  }
  EXPECT_EQ(rest, (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace locus
