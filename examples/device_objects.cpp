// Seed 000: torch.device objects and creating tensors on a device.
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const Device cpu_device("cpu");   // torch.device('cpu')
  const Device cuda1("cuda:1");     // torch.device('cuda:1'): parsed now, checked when used
  const Device device = best_device();
  std::cout << cpu_device << " " << cuda1 << " " << device << "\n";
  const Tensor x = tensor({1.0, 2.0, 3.0});  // x = torch.tensor([1.0, 2.0, 3.0])
  std::cout << x.device() << "\n";              // cpu
  const Tensor z = zeros({3, 4}, device);       // torch.zeros(3, 4, device=device)
  std::cout << z.device() << "\n";
  const Tensor y = ones({3, 4}, TensorOptions().device(device));  // device given as options
  std::cout << y.sum() << "\n";
}
