#pragma once
/// \file accelerator.h
/// Device selection: best_device() (the seeds' one-liner) and the generic accelerator layer.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>

#include "locus/device.h"

namespace locus {

/// cuda if available, else mps if available, else cpu. LOCUS_DEVICE overrides it (any device
/// string, e.g. LOCUS_DEVICE=sim). A value that cannot be used throws what Device(value) would,
/// naming the variable: ValueError when malformed, BackendUnavailableError for a device type
/// this machine lacks (LOCUS_DEVICE=cuda without a GPU), IndexError for a missing index.
Device best_device();

/// Sets the calling thread's current device of `device`'s type (no-op for cpu).
void set_device(Device device);
/// The calling thread's current device of `type` (cpu for CPU).
Device current_device(DeviceType type);
/// Number of devices of `type` (1 for cpu; 0 when the backend is missing or unavailable).
int device_count(DeviceType type) noexcept;
/// True when `type` can be used in this build and on this machine.
bool is_available(DeviceType type) noexcept;
/// Waits for all work queued on `device`.
void synchronize(Device device);

namespace mps {
/// Apple's Metal backend: false off Apple platforms (Locus has no MPS backend on Linux). The
/// C++ form of torch.backends.mps.is_available().
bool is_available() noexcept;
/// Number of MPS devices, as torch.mps.device_count(): 1 where MPS is available, else 0.
/// Never throws.
int device_count() noexcept;
}  // namespace mps

/// The generic layer, like torch.accelerator: the accelerator best_device() would pick.
namespace accelerator {
/// The accelerator type in use (CUDA, MPS, or Sim when LOCUS_DEVICE selects it), or none.
std::optional<DeviceType> current();
bool is_available();
/// Devices of the current accelerator type (0 when none).
int device_count();
/// Waits for the current accelerator's current device.
void synchronize();
}  // namespace accelerator

}  // namespace locus

LOCUS_API_END
