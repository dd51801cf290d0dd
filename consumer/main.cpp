// Uses the installed package: prints a sum computed on cpu and on sim:0, and whether cuda is
// there. It checks that no MPI library was mapped into the process, and where there is no
// NVIDIA driver no CUDA library either (Note [Backend modules]: the core loads the mpi module
// when an mpi group is asked for, the CUDA module only where a driver is).
#include <locus/locus.h>

#include <fstream>
#include <iostream>
#include <string>

int main() {
  const locus::Tensor x = locus::ones({2, 3}, locus::Device("sim:0"));
  const locus::Tensor y = locus::ones({2, 3}) * 2;
  std::cout << x.sum() << "\n" << y.sum() << "\n";
  const std::string reason = locus::cuda::unavailable_reason();
  std::cout << "cuda: " << (locus::cuda::is_available() ? "available" : "not available: " + reason) << "\n";
  const bool no_driver = reason.rfind("no NVIDIA driver", 0) == 0;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    for (const char* mpi_library : {"libmpi", "libopen-pal", "liblocus_mpi"})
      if (line.find(mpi_library) != std::string::npos) {
        std::cerr << "a run without MPI mapped an MPI library: " << line << "\n";
        return 1;
      }
    for (const char* cuda_library : {"libcuda", "libcublas", "libnccl", "libcudnn", "liblocus_cuda", "liblocus_nccl"})
      if (no_driver && line.find(cuda_library) != std::string::npos) {
        std::cerr << "a CPU-only run mapped a CUDA library: " << line << "\n";
        return 1;
      }
  }
  return x.sum().item<float>() == 6.f && y.sum().item<float>() == 12.f ? 0 : 1;
}
