// A LibTorch program as LibTorch's documentation writes one: a small CNN trained on MNIST-format
// images (Fashion-MNIST here) through torch::data's MNIST dataset, Normalize and Stack
// transforms and data loaders, evaluated on the test set. Exits non-zero below 70% accuracy.
// Usage: mnist_cnn <data dir> [training batches]
#include <torch/torch.h>

#include <cstdlib>
#include <iostream>

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(torch::nn::Conv2dOptions(1, 8, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(8, 16, /*kernel_size=*/5)),
        fc1(256, 64),
        fc2(64, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("drop", drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 256});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.25, /*train=*/is_training());
    return torch::log_softmax(fc2->forward(x), /*dim=*/1);
  }

  torch::nn::Conv2d conv1, conv2;
  torch::nn::Dropout2d drop;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: mnist_cnn <data dir> [training batches]\n";
    return 2;
  }
  const std::string root = argv[1];
  const int64_t max_batches = argc > 2 ? std::atoll(argv[2]) : 300;
  torch::manual_seed(1);
  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);

  Net model;
  model->to(device);
  auto train_set = torch::data::datasets::MNIST(root)
                       .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                       .map(torch::data::transforms::Stack<>());
  const size_t train_size = train_set.size().value();
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(train_set), torch::data::DataLoaderOptions().batch_size(64).workers(2));
  auto test_set = torch::data::datasets::MNIST(root, torch::data::datasets::MNIST::Mode::kTest)
                      .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                      .map(torch::data::transforms::Stack<>());
  const size_t test_size = test_set.size().value();
  auto test_loader = torch::data::make_data_loader(std::move(test_set), 1000);

  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(2e-3));
  model->train();
  int64_t batches = 0;
  for (auto& batch : *train_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto loss = torch::nll_loss(model->forward(data), targets);
    AT_ASSERT(!std::isnan(loss.template item<float>()));
    loss.backward();
    optimizer.step();
    if (++batches % 100 == 0)
      std::printf("batch %ld/%zu loss %.4f\n", static_cast<long>(batches), train_size / 64, loss.item<float>());
    if (batches == max_batches) break;
  }

  torch::NoGradGuard no_grad;
  model->eval();
  double test_loss = 0;
  int64_t correct = 0;
  for (const auto& batch : *test_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model->forward(data);
    test_loss += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum).item<float>();
    correct += output.argmax(1).eq(targets).sum().item<int64_t>();
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(test_size);
  std::printf("test: average loss %.4f, accuracy %.3f\n", test_loss / static_cast<double>(test_size), accuracy);
  return accuracy >= 0.70 ? 0 : 1;
}
