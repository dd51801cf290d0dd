// Seed 002: an nn.Sequential MLP moved to the device with every parameter, and data moved to
// the same device.
//   model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)); model = model.to(device)
//   x = torch.randn(32, 784).to(device); output = model(x); print(output.shape, output.device)
// The seed's nn.DataParallel section (several GPUs) comes with the multi-device work; on one
// device the code below is what it runs.
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const Device device = best_device();
  auto model = nn::Sequential{nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10)}.to(device);  // every parameter moves
  std::cout << model << "\n";  // print(model)
  for (const auto& [name, p] : model->named_parameters()) std::cout << name << " " << p.shape() << " on " << p.device() << "\n";
  const Tensor x = randn({32, 784}).to(device);
  const Tensor output = model(x);
  std::cout << output.shape() << "\n";   // [32, 10]
  std::cout << output.device() << "\n";  // cuda:0 on a GPU machine
  if (cuda::device_count() > 1) std::cout << cuda::device_count() << " GPUs found; this example uses one\n";
}
