// Seed 000: torch.cuda.set_device(1) and `with torch.cuda.device(2):`, on whichever
// accelerator this machine has (sim devices when there is no GPU).
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const DeviceType type = cuda::device_count() >= 3 ? DeviceType::CUDA : DeviceType::Sim;
  if (type == DeviceType::Sim && sim::device_count() < 3) {
    sim::Config c = sim::config();
    c.device_count = 3;
    sim::configure(c);
  }
  std::cout << device_count(type) << " " << type << " devices\n";  // torch.cuda.device_count()
  set_device(Device(type, 1));                                       // torch.cuda.set_device(1)
  std::cout << "current: " << current_device(type) << "\n";
  {
    DeviceGuard guard(Device(type, 2));                              // with torch.cuda.device(2):
    const Tensor x = randn({3, 3}, Device(type));                    //   x = torch.randn(3, 3, device='cuda')
    std::cout << x.device() << "\n";                                 //   cuda:2
  }
  std::cout << "current after the guard: " << current_device(type) << "\n";
}
