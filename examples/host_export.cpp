// Seeds 000/004: to host memory (.numpy() becomes to_vector), .cpu() first, .detach() first.
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const Device device = best_device().is_cpu() ? Device("sim:0") : best_device();
  const Tensor x_dev = randn({3, 3}).to(device);
  try {
    x_dev.to_vector<float>();  // x_gpu.numpy(): error
  } catch (const ValueError& e) {
    std::cout << "error: " << e.what() << "\n";
  }
  const std::vector<float> host = x_dev.cpu().to_vector<float>();  // x_gpu.cpu().numpy()
  std::cout << host.size() << " values on the host\n";
  const Tensor w = randn({3, 3}, TensorOptions().requires_grad(true)).to(device);
  try {
    w.cpu().to_vector<float>();  // needs detach()
  } catch (const ValueError& e) {
    std::cout << "error: " << e.what() << "\n";
  }
  std::cout << w.detach().cpu().to_vector<float>().size() << " values after detach\n";  // x.detach().cpu().numpy()
}
