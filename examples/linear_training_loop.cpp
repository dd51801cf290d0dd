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
  auto model = nn::Linear(10, 5).to(device);  // model = nn.Linear(10, 5).to(device)
  auto dataset = std::make_shared<data::TensorDataset>(randn({256, 10}), randn({256, 5}));
  data::DataLoader dataloader(dataset, data::DataLoaderOptions(32).shuffle(true));
  nn::MSELoss criterion;                         // criterion = nn.MSELoss()
  optim::SGD optimizer(model->parameters(), 0.1);  // optim.SGD(model.parameters(), lr=0.1)
  for (const data::Example<>& batch : dataloader) {
    const Tensor batch_x = batch.data.to(device);    // batch_x = batch_x.to(device)
    const Tensor batch_y = batch.target.to(device);  // batch_y = batch_y.to(device)
    const Tensor output = model(batch_x);            // output = model(batch_x)
    const Tensor loss = criterion(output, batch_y);  // loss = criterion(output, batch_y)
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    const float value = loss.item();  // loss.item()
    std::cout << "loss " << value << "\n";
  }
}
