// Uses the installed package: prints a sum computed on sim:0.
#include <locus/locus.h>

#include <iostream>

int main() {
  const locus::Tensor x = locus::ones({2, 3}, locus::Device("sim:0"));
  std::cout << x.sum() << "\n";
  return x.sum().item<float>() == 6.f ? 0 : 1;
}
