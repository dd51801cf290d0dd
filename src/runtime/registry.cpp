// The runtime registry and device resolution.

#include <mutex>
#include <string>

#include "locus/errors.h"
#include "src/core/device_ordinal.h"
#include "src/runtime/caching_allocator.h"
#include "src/runtime/device_runtime.h"
#include "src/runtime/host_memory.h"

namespace locus::runtime {
namespace {

// A runtime that comes from a module is loaded once, by the first thread that asks for it;
// linked-in ones are read without a lock.
class Registry {
 public:
  Registry() { register_backends(slots_); }

  DeviceRuntime* find(DeviceType type) noexcept {
    const int t = static_cast<int>(type);
    RuntimeSlot& slot = slots_[t];
    // Every reader of a module's slot passes through the once_flag, so the write is seen.
    if (slot.load) std::call_once(loaded_[t], [&] { slot.runtime = slot.load(load_failure_[t]); });
    return slot.runtime;
  }

  std::string why_unavailable(DeviceType type) {
    if (const DeviceRuntime* rt = find(type)) return rt->unavailable_reason();
    const std::string& failure = load_failure_[static_cast<int>(type)];
    return failure.empty() ? std::string(device_type_missing_reason(type)) : failure;
  }

 private:
  RuntimeSlot slots_[kNumDeviceTypes];
  std::once_flag loaded_[kNumDeviceTypes];
  std::string load_failure_[kNumDeviceTypes];
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string why_unavailable(DeviceType type) { return registry().why_unavailable(type); }

}  // namespace

DeviceRuntime* find_runtime(DeviceType type) noexcept { return registry().find(type); }

DeviceRuntime& runtime(DeviceType type) {
  DeviceRuntime* rt = find_runtime(type);
  if (!rt || !rt->is_available()) {
    throw BackendUnavailableError(std::string(device_type_display_name(type)) + " is not available: " + why_unavailable(type) +
                                  ". Use best_device() to pick what this machine has, or LOCUS_DEVICE=sim to test "
                                  "device placement without a GPU.");
  }
  return *rt;
}

std::string unavailable_reason(DeviceType type) {
  const DeviceRuntime* rt = find_runtime(type);
  if (rt && rt->is_available()) return {};
  return why_unavailable(type);
}

Device resolve_device(Device device) {
  if (device.is_cpu()) return device;
  DeviceRuntime& rt = runtime(device.type());
  const int index = device.has_index() ? device.index() : rt.current_device();
  const int count = rt.device_count();
  if (index >= count) {
    const std::string type(device_type_name(device.type()));
    throw IndexError("device " + type + ":" + std::to_string(index) + " does not exist: this machine has " +
                     std::to_string(count) + " " + type + " device" + (count == 1 ? "" : "s") +
                     (count ? " (" + type + ":0" + (count > 1 ? " to " + type + ":" + std::to_string(count - 1) : "") + ")" : "") +
                     (device.is_sim() ? "; set LOCUS_SIM_DEVICES or call sim::configure for more" : ""));
  }
  return Device(device.type(), index);
}

Allocator& allocator_for(Device device) {
  const Device d = resolve_device(device);
  return runtime(d.type()).allocator(detail::ordinal(d));
}

StreamId current_stream_id(Device device) {
  if (device.is_cpu()) return 0;
  StreamRuntime* streams = runtime(device.type()).streams();
  return streams ? streams->current_stream(device.index()) : 0;
}

Allocator& pinned_allocator() {
  // Locked pages from the first backend that has its own (CUDA registers them with the
  // driver); otherwise mlock'ed host pages.
  static const std::unique_ptr<CachingAllocator> pool = []() -> std::unique_ptr<CachingAllocator> {
    for (int t = 0; t < kNumDeviceTypes; ++t) {
      DeviceRuntime* rt = find_runtime(static_cast<DeviceType>(t));
      if (rt && rt->is_available())
        if (auto raw = rt->make_pinned_host_memory())
          return std::make_unique<CachingAllocator>(Device(DeviceType::CPU), std::move(raw));
    }
    return std::make_unique<CachingAllocator>(Device(DeviceType::CPU), std::make_unique<HostMemory>(0, true));
  }();
  return *pool;
}

}  // namespace locus::runtime
