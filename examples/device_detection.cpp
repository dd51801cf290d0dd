// Seeds 000/002/003/004: detect devices and pick one (torch.cuda.is_available() and friends).
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

void example() {
  using namespace locus;
  std::cout << "cuda available: " << std::boolalpha << cuda::is_available() << "\n";  // torch.cuda.is_available()
  std::cout << "cuda devices:   " << cuda::device_count() << "\n";                      // torch.cuda.device_count()
  if (cuda::is_available()) std::cout << "cuda:0 name:    " << cuda::get_device_name(0) << "\n";
  else std::cout << "why not:        " << cuda::unavailable_reason() << "\n";
  std::cout << "mps available:  " << mps::is_available() << "\n";  // torch.backends.mps.is_available()
  // device = cuda if available else mps if available else cpu (LOCUS_DEVICE overrides)
  const Device device = best_device();
  std::cout << "device: " << device << "\n";
}
