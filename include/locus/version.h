#pragma once
/// \file version.h
/// Version and build configuration.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <string>

namespace locus {

/// "0.1.0".
std::string version();
/// One line per build setting: compiler, flags, BLAS, OpenMP, CUDA (on/off and toolkit).
std::string build_config();

}  // namespace locus

LOCUS_API_END
