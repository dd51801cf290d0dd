#pragma once
// Entry point of the sim backend for the registry.

#include "locus/dtype.h"
#include "src/ops/op_id.h"
#include "src/runtime/device_runtime.h"

namespace locus::sim_backend {
/// The process-wide sim runtime.
runtime::DeviceRuntime& sim_runtime();
/// False where the sim devices were told to lack `op` for `dtype` (sim::Config::unsupported_ops).
/// Lock-free: one atomic load.
bool sim_supports(ops::OpId op, DType dtype) noexcept;
}  // namespace locus::sim_backend
