#pragma once
// DeviceRuntime: one per device type, registered in one place (registry.cpp).

#include <cstddef>
#include <string>
#include <utility>

#include "locus/device.h"
#include "locus/device_properties.h"
#include "src/runtime/allocator.h"
#include "src/runtime/raw_memory.h"
#include "src/runtime/stream_runtime.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::runtime {

/// One copy between buffers (see DeviceRuntime::copy_bytes).
struct CopyRequest {
  void* dst = nullptr;
  Device dst_device{DeviceType::CPU};
  const void* src = nullptr;
  Device src_device{DeviceType::CPU};
  size_t n = 0;
  bool non_blocking = false;
  /// The pinned host block on either side, if any: its allocator must not reuse it before an
  /// asynchronous copy that reads or writes it has finished.
  const detail::DataPtr* pinned_block = nullptr;
};

/// What the layers above ask of a device type, cheaply and on hot paths.
struct Capabilities {
  bool host_addressable = false;  ///< device memory is host memory (CPU kernels may run on it)
  bool asynchronous = false;      ///< queued work and asynchronous copies (streams and events)
};

/// Everything the layers above need from a device type: discovery, the current device, memory,
/// copies and streams. Kernels are not here: a backend registers its kernel table with the ops
/// layer (src/ops/kernel_registry.h) from the one registration file. Implementations live in
/// src/backends/<type>/. Discovery calls never throw; no call on an op's path takes a lock.
class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual DeviceType type() const noexcept = 0;
  /// Devices of this type; 0 on any driver problem (reason kept for unavailable_reason()).
  virtual int device_count() const noexcept = 0;
  /// Why there are no devices ("no NVIDIA driver found ..."); empty when there are.
  virtual std::string unavailable_reason() const = 0;
  /// Usable in this build and on this machine.
  bool is_available() const noexcept { return device_count() > 0; }
  /// Generic properties of device `index` (validated).
  virtual DeviceProperties properties(int index) const = 0;
  /// What every device of this type can do.
  virtual Capabilities capabilities() const noexcept = 0;
  /// Per-thread current device index.
  virtual int current_device() const = 0;
  /// Sets it; the index is already validated.
  virtual void set_device(int index) = 0;
  /// Sets it back when a DeviceGuard ends; may skip work set_device does (creating a context).
  virtual void restore_device(int index) { set_device(index); }
  /// The allocator of device `index` (validated).
  virtual Allocator& allocator(int index) = 0;
  /// Copies bytes between two contiguous buffers, at least one on this runtime's type and the
  /// other on the same type or the CPU. With `non_blocking` and a pinned host side, may return
  /// before the copy is done; then it returns the work the host side must wait for before the
  /// host touches it (see Note [Host reads wait]).
  virtual std::unique_ptr<detail::PendingWork> copy_bytes(const CopyRequest& request) = 0;
  /// Waits for all queued work on device `index`.
  virtual void synchronize(int index) = 0;
  /// (free, total) bytes of device `index`.
  virtual std::pair<uint64_t, uint64_t> mem_get_info(int index) = 0;
  /// Page-locked host memory this backend can copy from asynchronously; null when it has none
  /// (the pinned pool then locks ordinary pages itself).
  virtual std::unique_ptr<RawMemory> make_pinned_host_memory() { return nullptr; }
  /// Streams and events; null for device types that run everything in order.
  virtual StreamRuntime* streams() noexcept { return nullptr; }
};

/// The calling thread's current stream on `device` (resolved), 0 where the type has none.
StreamId current_stream_id(Device device);

/// The runtime for `type`, or null when Locus was built without it.
DeviceRuntime* find_runtime(DeviceType type) noexcept;
/// The runtime for `type`; BackendUnavailableError (with the reason) when missing or unusable.
DeviceRuntime& runtime(DeviceType type);
/// Why `type` cannot be used ("built without CUDA", the driver's story); empty when it can.
std::string unavailable_reason(DeviceType type);
/// Gives `device` a concrete index (the current one for -1) and checks that it exists:
/// BackendUnavailableError when the type is unusable, IndexError naming the device count.
Device resolve_device(Device device);
/// The allocator that serves `device` (resolved).
Allocator& allocator_for(Device device);
/// The cached pinned host allocator.
Allocator& pinned_allocator();
/// A device type's runtime as the registry holds it: linked in, or loaded the first time the
/// type is asked for (a backend module, Note [Backend modules]).
struct RuntimeSlot {
  DeviceRuntime* runtime = nullptr;
  /// Loads the runtime; null when it cannot be had, with the reason written to `reason`.
  DeviceRuntime* (*load)(std::string& reason) noexcept = nullptr;
};
/// Fills the registry; defined in src/backends/register_backends.cpp, the one place that
/// knows which backends this build has.
void register_backends(RuntimeSlot slots[kNumDeviceTypes]);

}  // namespace locus::runtime

LOCUS_API_END
