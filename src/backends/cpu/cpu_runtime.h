#pragma once
// Entry point of the CPU backend for the registry.

#include "src/runtime/device_runtime.h"

namespace locus::cpu {
/// The process-wide CPU runtime.
runtime::DeviceRuntime& cpu_runtime();
}  // namespace locus::cpu
