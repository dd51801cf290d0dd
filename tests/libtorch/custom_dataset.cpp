// A LibTorch program with its own dataset: a torch::data::datasets::Dataset subclass with get()
// and size(), a Lambda transform on each example, Stack, a random-order loader with worker
// threads, and a model trained on it. Exits non-zero unless the fit is close.
#include <torch/torch.h>

#include <iostream>

// y = 3 x0 - 2 x1 + 0.5 for the rows of a fixed random table.
class LineDataset : public torch::data::datasets::Dataset<LineDataset> {
 public:
  explicit LineDataset(int64_t size) : inputs_(torch::randn({size, 2})) {
    targets_ = inputs_.matmul(torch::tensor({3.0f, -2.0f})).unsqueeze(1) + 0.5;
  }
  torch::data::Example<> get(size_t index) override { return {inputs_[index], targets_[index]}; }
  torch::optional<size_t> size() const override { return static_cast<size_t>(inputs_.size(0)); }

 private:
  torch::Tensor inputs_, targets_;
};

int main() {
  torch::manual_seed(0);
  // The transform scales every input by 2 and the model learns the scaled problem.
  auto dataset = LineDataset(512)
                     .map(torch::data::transforms::Lambda<torch::data::Example<>>([](torch::data::Example<> e) {
                       e.data = e.data * 2;
                       return e;
                     }))
                     .map(torch::data::transforms::Stack<>());
  auto loader = torch::data::make_data_loader(std::move(dataset),
                                              torch::data::DataLoaderOptions().batch_size(32).workers(2));

  torch::nn::Sequential model(torch::nn::Linear(2, 8), torch::nn::Functional(torch::tanh), torch::nn::Linear(8, 1));
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  double last = 0;
  for (int epoch = 0; epoch < 30; ++epoch) {
    double total = 0;
    int64_t count = 0;
    for (auto& batch : *loader) {
      optimizer.zero_grad();
      auto loss = torch::mse_loss(model->forward(batch.data), batch.target);
      loss.backward();
      optimizer.step();
      total += loss.item<double>();
      ++count;
    }
    last = total / static_cast<double>(count);
    if (epoch == 20)  // a smaller step for the last epochs, through the group's options
      for (auto& group : optimizer.param_groups())
        static_cast<torch::optim::SGDOptions&>(group.options()).lr(0.01);
  }
  for (const auto& p : model->named_parameters()) std::cout << p.key() << " " << p.value().sizes() << "\n";
  std::cout << "final mse " << last << "\n";
  return last < 0.05 ? 0 : 1;
}
