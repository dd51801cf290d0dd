// The one place that knows which backends this build has (ARCHITECTURE.md: registered
// explicitly, not by static initialisers, which static linking would drop): their runtimes
// for the runtime layer, their kernel tables for the ops layer. CPU and sim are linked in; the
// CUDA backend is a module loaded on first use (Note [Backend modules]), or linked in when
// Locus is built as one static library.

#include <string>

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/cpu_runtime.h"
#include "src/backends/cuda/cuda_module.h"
#include "src/backends/sim/sim_runtime.h"
#include "src/ops/kernel_registry.h"
#include "src/runtime/backend_module.h"
#include "src/runtime/device_runtime.h"
#if LOCUS_CUDA_LINKED
#include "src/backends/cuda/cuda_device_runtime.h"
#include "src/backends/cuda/cuda_kernel_table.h"
#endif

namespace locus {
namespace {

struct CudaBackend {
  cuda_backend::ModuleEntry entry;
  std::string reason;  // why `entry` is empty
};

CudaBackend find_cuda_backend() noexcept {
  CudaBackend found;
#if LOCUS_CUDA_LINKED
  found.entry = {&cuda_backend::cuda_runtime(), &cuda_backend::kernel_table()};
#elif !LOCUS_BACKEND_MODULES
  found.reason = "built without CUDA";  // a static liblocus links its backends in or has none
#else
  // Without a driver the module could not use a GPU anyway; not loading it keeps a CPU-only
  // machine's process free of the CUDA libraries the module needs.
  found.reason = cuda_backend::missing_driver_reason();
  if (!found.reason.empty()) return found;
  const runtime::ModuleLookup module = runtime::load_backend_module("cuda");
  if (!module.provides) {
    found.reason = module.reason;
    return found;
  }
  found.entry = *static_cast<const cuda_backend::ModuleEntry*>(module.provides);
#endif
  return found;
}

const CudaBackend& cuda_backend_once() noexcept {
  static const CudaBackend backend = find_cuda_backend();
  return backend;
}

}  // namespace

void runtime::register_backends(RuntimeSlot slots[kNumDeviceTypes]) {
  slots[static_cast<int>(DeviceType::CPU)].runtime = &cpu::cpu_runtime();
  slots[static_cast<int>(DeviceType::Sim)].runtime = &sim_backend::sim_runtime();
  slots[static_cast<int>(DeviceType::CUDA)].load = [](std::string& reason) noexcept {
    const CudaBackend& cuda = cuda_backend_once();
    reason = cuda.reason;
    return cuda.entry.runtime;
  };
}

void ops::register_kernels(BackendKernels slots[kNumDeviceTypes]) {
  slots[static_cast<int>(DeviceType::CPU)] = {&cpu::kernel_table(), nullptr};
  // sim devices are host memory: they run the CPU kernels, minus what they are told to lack.
  slots[static_cast<int>(DeviceType::Sim)] = {&cpu::kernel_table(), &sim_backend::sim_supports};
  slots[static_cast<int>(DeviceType::CUDA)].load = []() noexcept { return cuda_backend_once().entry.kernels; };
}

}  // namespace locus
