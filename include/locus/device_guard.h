#pragma once
/// \file device_guard.h
/// DeviceGuard: the C++ form of `with torch.cuda.device(2):`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/device.h"

namespace locus {

/// Makes `device` the calling thread's current device of its type for the guard's lifetime,
/// then restores the previous one (also when unwinding). Nests; per thread. A CPU device or an
/// index of -1 changes nothing. Throws like set_device() for a missing device.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  /// The device that was current before the guard.
  Device original() const noexcept { return original_; }

 private:
  Device original_;
  bool active_ = false;
};

}  // namespace locus

LOCUS_API_END
