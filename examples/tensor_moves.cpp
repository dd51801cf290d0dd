// Seeds 000/002/003/004: .to(device), .to(device, dtype), .cuda()/.cpu(), no-op moves.
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const Device device = best_device();
  const Tensor x = tensor({1.0, 2.0, 3.0});
  const Tensor x_dev = x.to(device);                 // x.to(device)
  std::cout << x_dev << "\n";
  const Tensor x_fp16 = x.to(device, kFloat16);      // x.to(device=device, dtype=torch.float16)
  std::cout << x_fp16.dtype() << " " << x_fp16.device() << "\n";
  const Tensor x_cpu = x_dev.cpu();                  // x_gpu.cpu()
  const Tensor x_same = x_cpu.cpu();
  std::cout << std::boolalpha << x_same.is_same(x_cpu) << "\n";  // True: same object
  if (cuda::is_available()) {
    const Tensor g = randn({3, 3}).cuda();           // x.cuda()
    std::cout << g.device() << "\n";
  }
}
