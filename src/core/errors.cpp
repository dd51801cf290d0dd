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

// Note [Out-of-memory hints]
// "Tried to allocate 4.00 MiB ... of which 4.00 MiB is free" reads as a contradiction; PyTorch
// leaves users to work it out. Two causes explain a request that fits the free figure, and the
// message names whichever the figures show: the caching allocator asks the device for a whole
// segment, bigger than the request (Note [Caching allocator]: 20 MiB for 1 to 10 MiB), which
// does not fit; or enough memory is cached, but in free blocks of segments that live tensors
// still use, none of which this request can use (fragmentation: too small, in the other pool,
// or another stream's), and the allocator returns only whole free segments to the device.
std::string oom_hint(uint64_t requested, uint64_t free_bytes, uint64_t cached, uint64_t segment) {
  std::string hint;
  if (requested <= free_bytes && segment > free_bytes)
    hint += " Hint: the allocator takes device memory in whole segments, and this request needed a new " +
            format_bytes(segment) + " segment, more than the " + format_bytes(free_bytes) + " free.";
  if (cached >= requested)
    hint += " Hint: the " + format_bytes(cached) +
            " reserved but unallocated is split into free blocks of segments that live tensors still use, none of "
            "which this request can use (fragmentation); empty_cache() cannot return them, freeing those tensors can.";
  return hint;
}

std::string oom_message(Device device, uint64_t requested, uint64_t capacity, uint64_t free_bytes, uint64_t allocated,
                        uint64_t reserved, uint64_t segment) {
  const uint64_t cached = reserved > allocated ? reserved - allocated : 0;
  return std::string(device_type_display_name(device.type())) + " out of memory. Tried to allocate " + format_bytes(requested) + ". " + device.str() +
         " has a total capacity of " + format_bytes(capacity) + " of which " + format_bytes(free_bytes) + " is free. " +
         format_bytes(allocated) + " is allocated by tensors and " + format_bytes(cached) + " is reserved but unallocated." +
         oom_hint(requested, free_bytes, cached, segment) +
         " Free tensors you no longer need, or use smaller batches.";
}
}  // namespace

OutOfMemoryError::OutOfMemoryError(Device device, uint64_t requested, uint64_t capacity, uint64_t free_bytes,
                                   uint64_t allocated, uint64_t reserved, uint64_t segment)
    : Error(oom_message(device, requested, capacity, free_bytes, allocated, reserved, segment)), device_(device),
      requested_(requested), capacity_(capacity), free_(free_bytes), allocated_(allocated), reserved_(reserved),
      segment_(segment) {}

}  // namespace locus
