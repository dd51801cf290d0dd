#pragma once
/// \file device_properties.h
/// What a device reports about itself, the same fields for every device type.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string>

#include "locus/device.h"

namespace locus {

/// What get_device_properties() reports. Every device type fills the generic fields; the
/// compute capability and versions are CUDA's and stay 0 / empty elsewhere.
struct DeviceProperties {
  std::string name;                ///< "NVIDIA H100 80GB HBM3", "Locus simulated device 0", "cpu"
  uint64_t total_memory = 0;       ///< bytes the device can hold (host memory for cpu)
  int multi_processor_count = 0;   ///< SMs on CUDA, threads on the CPU, 1 for sim
  int major = 0;                   ///< CUDA compute capability, major
  int minor = 0;                   ///< CUDA compute capability, minor
  bool host_addressable = false;   ///< device memory is ordinary host memory (cpu, sim)
  bool asynchronous = false;       ///< work is queued on streams and copies can overlap it (cuda)
  std::string driver_version;      ///< "13.0" where the type has a driver, else empty
  std::string runtime_version;     ///< "13.0" where the type has a runtime library, else empty
  std::string pci_bus_id;          ///< "0000:1b:00.0" for a CUDA device (which GPU it is), else empty
};

/// Properties of `device` (the current device of its type when it has no index). IndexError
/// for a device that does not exist, BackendUnavailableError when its type is unavailable.
DeviceProperties get_device_properties(Device device);

}  // namespace locus

LOCUS_API_END
