#pragma once
// Entry point of the sim backend for the registry.

#include "src/runtime/device_runtime.h"

namespace locus::sim_backend {
/// The process-wide sim runtime.
runtime::DeviceRuntime& sim_runtime();
}  // namespace locus::sim_backend
