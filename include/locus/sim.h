#pragma once
/// \file sim.h
/// The simulated accelerator `sim:N`: host memory behind its own caching allocator, with a
/// capacity, obeying every placement rule CUDA does. See docs/devices.md.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string>
#include <vector>

namespace locus::sim {

/// Configuration of the sim devices.
struct Config {
  /// Number of sim devices (LOCUS_SIM_DEVICES, default 2).
  int device_count = 2;
  /// Capacity of each device in bytes (LOCUS_SIM_MEMORY, default 8 GiB).
  uint64_t memory_bytes = uint64_t{8} << 30;
  /// Ops the devices pretend to lack, as "gelu" (every dtype) or "gelu:float16" (one dtype).
  /// Calls to them go through the CPU-fallback policy (fallback.h).
  std::vector<std::string> unsupported_ops;
};

/// The configuration in force (from the environment until configure() is called).
Config config();
/// Replaces the configuration. ValueError when a sim device still holds tensors (their memory
/// would outlive its device), or for a count outside 1..64, or an unknown op name.
void configure(const Config& config);
/// Restores the configuration from the environment variables.
void reset_config();
/// Number of sim devices.
int device_count() noexcept;
/// The calling thread's current sim device.
int current_device();
/// Sets the calling thread's current sim device. IndexError when it does not exist.
void set_device(int index);

}  // namespace locus::sim

LOCUS_API_END
