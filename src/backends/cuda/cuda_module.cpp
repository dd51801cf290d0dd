// The entry point of liblocus_cuda.so (Note [Backend modules]); built only into the module.

#include "locus/export.h"
#include "src/backends/cuda/cuda_device_runtime.h"
#include "src/backends/cuda/cuda_kernel_table.h"
#include "src/backends/cuda/cuda_module.h"
#include "src/core/build_info.h"
#include "src/runtime/backend_module.h"

namespace {
// The CUDA runtime and kernel table, for src/backends/register_backends.cpp.
const void* provide_cuda_backend() {
  static const locus::cuda_backend::ModuleEntry entry{&locus::cuda_backend::cuda_runtime(),
                                                      &locus::cuda_backend::kernel_table()};
  return &entry;
}
}  // namespace

LOCUS_BACKEND_MODULE(provide_cuda_backend)
