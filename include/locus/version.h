#pragma once
/// \file version.h
/// Version and build configuration.

#include <string>

namespace locus {

/// "0.1.0".
std::string version();
/// One line per build setting: compiler, flags, BLAS, OpenMP, CUDA (on/off and toolkit).
std::string build_config();

}  // namespace locus
