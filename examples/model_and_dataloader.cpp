// Seed 003: a custom module moved to the GPU when there is one, and a DataLoader whose batches
// are moved before the model runs on them.
//   class MyModel(nn.Module): self.linear = nn.Linear(2, 1)
//   if torch.cuda.is_available(): model.to(device)
//   dataloader = DataLoader(dataset, batch_size=32, shuffle=True)
//   for inputs, labels in dataloader: inputs = inputs.to(device); labels = labels.to(device); outputs = model(inputs)
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

using namespace locus;

class MyModelImpl : public nn::Module {
 public:
  MyModelImpl() { linear = register_module("linear", nn::Linear(2, 1)); }  // self.linear = nn.Linear(2, 1)
  Tensor forward(const Tensor& x) override { return linear(x); }

 private:
  nn::Linear linear{nullptr};
};
LOCUS_MODULE(MyModel);

void example() {
  const Device device = best_device();
  MyModel model;
  if (!device.is_cpu()) {
    model->to(device);
    std::cout << "moved the model to " << device << "\n";
  } else {
    std::cout << "no GPU: the model stays on the CPU\n";
  }
  auto dataset = std::make_shared<data::TensorDataset>(randn({100, 2}), randn({100, 1}));
  data::DataLoader dataloader(dataset, data::DataLoaderOptions().batch_size(32).shuffle(true));
  for (const data::Example<>& batch : dataloader) {
    const Tensor inputs = batch.data.to(device);
    const Tensor labels = batch.target.to(device);
    const Tensor outputs = model(inputs);
    std::cout << "batch " << inputs.shape() << " -> " << outputs.shape() << " on " << outputs.device() << "\n";
  }
}
