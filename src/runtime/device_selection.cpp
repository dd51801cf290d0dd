// Current devices, DeviceGuard, best_device() and the accelerator layer.

#include <cstdlib>
#include <string>

#include "locus/accelerator.h"
#include "locus/device_guard.h"
#include "locus/errors.h"
#include "src/core/device_ordinal.h"
#include "src/runtime/device_runtime.h"

namespace locus {

void set_device(Device device) {
  if (device.is_cpu()) return;
  const Device d = runtime::resolve_device(device);
  runtime::runtime(d.type()).set_device(d.index());
}

Device current_device(DeviceType type) {
  if (type == DeviceType::CPU) return Device(DeviceType::CPU);
  return Device(type, runtime::runtime(type).current_device());
}

int device_count(DeviceType type) noexcept {
  const runtime::DeviceRuntime* rt = runtime::find_runtime(type);
  return rt && rt->is_available() ? rt->device_count() : 0;
}

bool is_available(DeviceType type) noexcept {
  const runtime::DeviceRuntime* rt = runtime::find_runtime(type);
  return rt && rt->is_available();
}

DeviceProperties get_device_properties(Device device) {
  const Device d = runtime::resolve_device(device);
  return runtime::runtime(d.type()).properties(detail::ordinal(d));
}

void synchronize(Device device) {
  if (device.is_cpu()) return;
  const Device d = runtime::resolve_device(device);
  runtime::runtime(d.type()).synchronize(d.index());
}

Device best_device() {
  if (const char* env = std::getenv("LOCUS_DEVICE"); env && *env) {
    // The error Device(env) would raise, of the same type (a malformed string is a ValueError,
    // an unusable backend a BackendUnavailableError, a missing index an IndexError), naming the
    // variable: code that handles one handles the other.
    const std::string prefix = std::string("LOCUS_DEVICE='") + env + "' cannot be used: ";
    try {
      return runtime::resolve_device(Device(std::string_view(env)));
    } catch (const BackendUnavailableError&) {
      // Not the usual advice to call best_device(): that is the call that failed.
      const DeviceType type = Device(std::string_view(env)).type();
      throw BackendUnavailableError(prefix + std::string(device_type_display_name(type)) + " is not available (" +
                                    runtime::unavailable_reason(type) +
                                    "); unset LOCUS_DEVICE to let best_device() choose, or set LOCUS_DEVICE=sim to "
                                    "test device placement without a GPU");
    } catch (const IndexError& e) {
      throw IndexError(prefix + e.what());
    } catch (const Error& e) {
      throw ValueError(prefix + e.what());
    }
  }
  for (DeviceType type : kPreferredAccelerators)
    if (is_available(type)) return current_device(type);
  return Device(DeviceType::CPU);
}

DeviceGuard::DeviceGuard(Device device) : original_(device.type() == DeviceType::CPU ? device : Device(device.type())) {
  if (device.is_cpu() || !device.has_index()) return;
  const Device target = runtime::resolve_device(device);
  runtime::DeviceRuntime& rt = runtime::runtime(target.type());
  original_ = Device(target.type(), rt.current_device());
  rt.set_device(target.index());
  active_ = true;
}

DeviceGuard::~DeviceGuard() {
  if (active_) runtime::runtime(original_.type()).restore_device(original_.index());
}

namespace mps {
bool is_available() noexcept { return locus::is_available(DeviceType::MPS); }
int device_count() noexcept { return locus::device_count(DeviceType::MPS); }
}  // namespace mps

namespace accelerator {
std::optional<DeviceType> current() {
  const Device d = best_device();
  if (d.is_cpu()) return std::nullopt;
  return d.type();
}
bool is_available() { return current().has_value(); }
int device_count() {
  const auto t = current();
  return t ? locus::device_count(*t) : 0;
}
void synchronize() {
  if (const auto t = current()) locus::synchronize(current_device(*t));
}
}  // namespace accelerator

}  // namespace locus
