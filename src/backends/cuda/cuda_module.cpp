// The entry points of liblocus_cuda.so (Note [Backend modules]); built only into the module.

#include "locus/export.h"
#include "src/backends/cuda/cuda_device_runtime.h"
#include "src/backends/cuda/cuda_kernel_table.h"
#include "src/backends/cuda/cuda_module.h"
#include "src/core/build_info.h"

extern "C" {

/// The Locus version this module was built with; the core loads only its own.
LOCUS_API const char* locus_module_version() { return LOCUS_VERSION_STRING; }

/// The CUDA runtime and kernel table, for src/backends/register_backends.cpp.
LOCUS_API locus::cuda_backend::ModuleEntry locus_cuda_module_entry() {
  return {&locus::cuda_backend::cuda_runtime(), &locus::cuda_backend::kernel_table()};
}

}  // extern "C"
