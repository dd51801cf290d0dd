// The one place that knows which backends this build has (ARCHITECTURE.md: registered
// explicitly, not by static initialisers, which static linking would drop): their runtimes
// for the runtime layer, their kernel tables for the ops layer.

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/cpu_runtime.h"
#include "src/backends/sim/sim_runtime.h"
#include "src/ops/kernel_registry.h"
#include "src/runtime/device_runtime.h"
#if LOCUS_WITH_CUDA
#include "src/backends/cuda/cuda_device_runtime.h"
#include "src/backends/cuda/cuda_kernel_table.h"
#endif

namespace locus {

void runtime::register_backends(DeviceRuntime* slots[kNumDeviceTypes]) {
  slots[static_cast<int>(DeviceType::CPU)] = &cpu::cpu_runtime();
  slots[static_cast<int>(DeviceType::Sim)] = &sim_backend::sim_runtime();
#if LOCUS_WITH_CUDA
  slots[static_cast<int>(DeviceType::CUDA)] = &cuda_backend::cuda_runtime();
#endif
}

void ops::register_kernels(BackendKernels slots[kNumDeviceTypes]) {
  slots[static_cast<int>(DeviceType::CPU)] = {&cpu::kernel_table(), nullptr};
  // sim devices are host memory: they run the CPU kernels, minus what they are told to lack.
  slots[static_cast<int>(DeviceType::Sim)] = {&cpu::kernel_table(), &sim_backend::sim_supports};
#if LOCUS_WITH_CUDA
  slots[static_cast<int>(DeviceType::CUDA)] = {&cuda_backend::kernel_table(), nullptr};
#endif
}

}  // namespace locus
