#pragma once
// What the CUDA backend module hands the core (Note [Backend modules]).

#include "src/ops/kernel_table.h"
#include "src/runtime/device_runtime.h"

namespace locus::cuda_backend {

/// The CUDA backend's runtime and kernels, as its module's entry point returns them.
struct ModuleEntry {
  runtime::DeviceRuntime* runtime = nullptr;
  const ops::KernelTable* kernels = nullptr;
};

}  // namespace locus::cuda_backend

/// The CUDA module's entry point, `extern "C"` so that the core finds it by name.
#define LOCUS_CUDA_MODULE_ENTRY "locus_cuda_module_entry"
