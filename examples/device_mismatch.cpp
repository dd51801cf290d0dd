// Seeds 000/001/002: operands on different devices fail with a clear error; the fix is a move.
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const Device device = best_device().is_cpu() ? Device("sim:0") : best_device();
  const Tensor x_cpu = tensor({1.0, 2.0});
  const Tensor x_dev = tensor({3.0, 4.0}).to(device);
  try {
    const Tensor result = x_cpu + x_dev;  // RuntimeError in PyTorch
  } catch (const DeviceMismatchError& e) {
    std::cout << "error: " << e.what() << "\n";
  }
  const Tensor result = x_cpu.to(x_dev.device()) + x_dev;  // the fix
  std::cout << result << "\n";
}
