#pragma once
// Entry point of the CUDA backend for the registry.

#include "src/runtime/device_runtime.h"

namespace locus::cuda_backend {
/// The process-wide CUDA runtime (device discovery, memory, copies).
runtime::DeviceRuntime& cuda_runtime();
}  // namespace locus::cuda_backend
