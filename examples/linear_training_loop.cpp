// Seed 000: the portable pattern. Pick the device, move the model once, move each batch.
//   model = nn.Linear(10, 5).to(device)
//   for batch_x, batch_y in dataloader: batch_x = batch_x.to(device); ...; output = model(batch_x)
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const Device device = best_device();  // cuda, else mps, else cpu (LOCUS_DEVICE overrides)
  std::cout << "device: " << device << "\n";
  manual_seed(0);
  auto model = std::make_shared<nn::Linear>(10, 5);
  model->to(device);  // model = nn.Linear(10, 5).to(device)
  auto dataset = std::make_shared<data::TensorDataset>(randn({256, 10}), randn({256, 5}));
  data::DataLoader dataloader(dataset, {32, true});
  optim::SGD optimizer(model->parameters(), {0.1});
  for (const data::Example& batch : dataloader) {
    const Tensor batch_x = batch.data.to(device);    // batch_x = batch_x.to(device)
    const Tensor batch_y = batch.target.to(device);  // batch_y = batch_y.to(device)
    const Tensor output = (*model)(batch_x);         // output = model(batch_x)
    const Tensor loss = nn::mse_loss(output, batch_y);  // loss = criterion(output, batch_y)
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    std::cout << "loss " << loss.item<float>() << "\n";
  }
}
