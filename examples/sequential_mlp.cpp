// Seed 002: an nn.Sequential MLP moved to the device with every parameter, data moved to the
// same device, and nn.DataParallel splitting a batch over several devices.
//   model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)); model = model.to(device)
//   x = torch.randn(32, 784).to(device); output = model(x); print(output.shape, output.device)
//   if torch.cuda.device_count() > 1: model = nn.DataParallel(model)
//   x = torch.randn(64, 784).to(device); output = model(x)  # torch.Size([64, 10])
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

  // Several GPUs: DataParallel over all of them. Without two, the same code runs over two
  // simulated devices, so the split can be seen on any machine.
  std::vector<Device> devices;
  if (cuda::device_count() > 1) {
    std::cout << cuda::device_count() << " GPUs\n";  // print(f"GPU {torch.cuda.device_count()}개 사용")
  } else if (sim::device_count() > 1) {
    devices = {Device("sim:0"), Device("sim:1")};
    model->to(devices[0]);
  } else {
    std::cout << "one device: DataParallel would run the model as it is\n";
    return;
  }
  nn::DataParallel parallel(model, devices);  // model = nn.DataParallel(model)
  const Tensor batch = randn({64, 784});
  const Tensor out = parallel(batch);        // 32 rows on each device, gathered on the first
  std::cout << "DataParallel over " << parallel->device_ids().size() << " devices: " << out.shape() << " on "
            << out.device() << "\n";
}
