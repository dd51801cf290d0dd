#include "locus/version.h"

#include "src/core/build_info.h"

namespace locus {

std::string version() { return LOCUS_VERSION_STRING; }

std::string build_config() {
  std::string s;
  s += "  version:      " + version() + "\n";
  s += "  compiler:     " LOCUS_COMPILER "\n";
  s += "  build type:   " LOCUS_BUILD_TYPE "\n";
  s += "  CPU baseline: " LOCUS_CPU_BASELINE "\n";
  s += "  BLAS:         " LOCUS_BLAS "\n";
  s += "  OpenMP:       " LOCUS_OPENMP "\n";
  s += "  CUDA backend: " LOCUS_CUDA_STATE "\n";
  return s;
}

}  // namespace locus
