// Seed 002: memory_allocated / memory_reserved / total memory / empty_cache.
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  const Device device = best_device().is_cpu() ? Device("sim:0") : best_device();
  {
    const Tensor large_tensor = randn({1000, 1000}, device);
    std::cout << "allocated: " << memory::memory_allocated(device) / 1024.0 / 1024.0 << " MB\n";
    std::cout << "reserved:  " << memory::memory_reserved(device) / 1024.0 / 1024.0 << " MB\n";
  }  // `del large_tensor`: the handle is gone, the block is cached
  std::cout << "total:     " << memory::mem_get_info(device).second / 1024.0 / 1024.0 / 1024.0 << " GB\n";
  memory::empty_cache(device);  // torch.cuda.empty_cache()
  std::cout << "after empty_cache, reserved: " << memory::memory_reserved(device) << " bytes\n";
  std::cout << memory::memory_summary(device);
}
