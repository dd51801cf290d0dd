#include "locus/errors.h"

#include <cstdio>

namespace locus {

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

DeviceMismatchError::DeviceMismatchError(Device first, Device second, std::string argument, std::string op)
    : Error("Expected all tensors to be on the same device, but found at least two devices, " + first.str() + " and " +
            second.str() + "! (when checking argument '" + argument + "' of '" + op + "')"),
      first_(first), second_(second), argument_(std::move(argument)), op_(std::move(op)) {}

DeviceMismatchError::DeviceMismatchError(Device first, Device second, std::string argument, std::string op,
                                         std::string module, const std::string& message)
    : Error(message), first_(first), second_(second), argument_(std::move(argument)), op_(std::move(op)),
      module_(std::move(module)) {}

namespace {
std::string oom_message(Device device, uint64_t requested, uint64_t capacity, uint64_t free_bytes, uint64_t allocated,
                        uint64_t reserved) {
  return std::string(device_type_display_name(device.type())) + " out of memory. Tried to allocate " + format_bytes(requested) + ". " + device.str() +
         " has a total capacity of " + format_bytes(capacity) + " of which " + format_bytes(free_bytes) + " is free. " +
         format_bytes(allocated) + " is allocated by tensors and " +
         format_bytes(reserved > allocated ? reserved - allocated : 0) +
         " is reserved but unallocated. Free tensors you no longer need, or use smaller batches.";
}
}  // namespace

OutOfMemoryError::OutOfMemoryError(Device device, uint64_t requested, uint64_t capacity, uint64_t free_bytes,
                                   uint64_t allocated, uint64_t reserved)
    : Error(oom_message(device, requested, capacity, free_bytes, allocated, reserved)), device_(device),
      requested_(requested), capacity_(capacity), free_(free_bytes), allocated_(allocated), reserved_(reserved) {}

}  // namespace locus
