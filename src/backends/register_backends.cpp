// The one place that knows which backends this build has (ARCHITECTURE.md: registered
// explicitly, not by static initialisers, which static linking would drop).

#include "src/backends/cpu/cpu_runtime.h"
#include "src/backends/sim/sim_runtime.h"
#include "src/runtime/device_runtime.h"
#if LOCUS_WITH_CUDA
#include "src/backends/cuda/cuda_device_runtime.h"
#endif

namespace locus::runtime {

void register_backends(DeviceRuntime* slots[kNumDeviceTypes]) {
  slots[static_cast<int>(DeviceType::CPU)] = &cpu::cpu_runtime();
  slots[static_cast<int>(DeviceType::Sim)] = &sim_backend::sim_runtime();
#if LOCUS_WITH_CUDA
  slots[static_cast<int>(DeviceType::CUDA)] = &cuda_backend::cuda_runtime();
#endif
}

}  // namespace locus::runtime
