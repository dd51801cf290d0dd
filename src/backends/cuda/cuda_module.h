#pragma once
// What the CUDA backend module hands the core (Note [Backend modules]).

#include <dlfcn.h>

#include <string>

#include "src/ops/kernel_table.h"
#include "src/runtime/device_runtime.h"

namespace locus::cuda_backend {

/// Why there is no NVIDIA driver to use, or empty when libcuda.so.1 loads. The CUDA runtime
/// reports a missing driver as "insufficient driver"; looking for the library ourselves gives
/// the user the real story. The core asks before it loads the module, and the runtime asks in
/// its probe (the only check where the backend is linked in).
inline std::string missing_driver_reason() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) return "no NVIDIA driver found (libcuda.so.1 could not be loaded)";
  dlclose(driver);
  return {};
}

/// The CUDA backend's runtime and kernels, what its module provides (Note [Backend modules]).
struct ModuleEntry {
  runtime::DeviceRuntime* runtime = nullptr;
  const ops::KernelTable* kernels = nullptr;
};

}  // namespace locus::cuda_backend
