// An unchanged LibTorch program over the data pipeline, compiled with `torch` naming Locus: the
// spellings of torch::data must all exist.

#include <fstream>

#include "tests/test_util.h"

namespace libtorch_program {

namespace torch = locus;

struct MyDataset : torch::data::datasets::Dataset<MyDataset> {
  explicit MyDataset(int64_t n) : n_(n) {}
  torch::data::Example<> get(size_t index) override {
    return {torch::full({1, 2, 2}, static_cast<double>(index)), torch::tensor(static_cast<int64_t>(index % 10))};
  }
  torch::optional<size_t> size() const override { return static_cast<size_t>(n_); }

 private:
  int64_t n_;
};

struct Pairs : torch::data::datasets::Dataset<Pairs, torch::data::Example<torch::Tensor, int>> {
  torch::data::Example<torch::Tensor, int> get(size_t index) override {
    return {torch::zeros({1}), static_cast<int>(index)};
  }
  torch::optional<size_t> size() const override { return 3; }
};

TEST(LibTorchProgram, DataPipelineSpellings) {
  torch::Device device(torch::kCPU);
  auto ds = MyDataset(10)
                .map(torch::data::transforms::Lambda<torch::data::Example<>>([](torch::data::Example<> e) {
                  e.data = e.data * 2;
                  return e;
                }))
                .map(torch::data::transforms::Stack<>());
  auto loader2 = torch::data::make_data_loader(std::move(ds), torch::data::DataLoaderOptions().batch_size(4).workers(2));
  int64_t examples = 0;
  for (auto& batch : *loader2) {
    auto data = batch.data.to(device);
    EXPECT_EQ(data.size(1), 1);
    examples += batch.target.size(0);
  }
  EXPECT_EQ(examples, 10);
  EXPECT_EQ(Pairs().get_batch({2})[0].target, 2);

  const std::string root = torch::data::kFashionMnistDir;
  if (!std::ifstream(root + "/t10k-labels-idx1-ubyte.gz")) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  auto train_dataset = torch::data::datasets::MNIST(root)
                           .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                           .map(torch::data::transforms::Stack<>());
  const size_t n = train_dataset.size().value();
  EXPECT_EQ(n, 60000u);
  auto train_loader =
      torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(train_dataset), 64);
  size_t batches = 0;
  for (auto& batch : *train_loader) {
    EXPECT_EQ(batch.data.sizes(), (locus::Shape{64, 1, 28, 28}));
    auto data = batch.data.to(device);
    auto target = batch.target;
    EXPECT_EQ(target.dtype(), torch::kInt64);
    if (++batches == 3) break;
  }
  EXPECT_EQ(batches, 3u);

  auto test_dataset = torch::data::datasets::MNIST(root, torch::data::datasets::MNIST::Mode::kTest)
                          .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                          .map(torch::data::transforms::Stack<>());
  auto test_loader = torch::data::make_data_loader(std::move(test_dataset), 1000);
  size_t test_examples = 0;
  for (const torch::data::Example<>& batch : *test_loader) test_examples += static_cast<size_t>(batch.data.size(0));
  EXPECT_EQ(test_examples, 10000u);
}

}  // namespace libtorch_program
