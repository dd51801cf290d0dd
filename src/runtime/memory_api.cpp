// The public memory calls (memory.h) and the cuda:: forms of them.

#include <cstdio>
#include <sstream>

#include "locus/accelerator.h"
#include "locus/cuda.h"
#include "locus/errors.h"
#include "locus/memory.h"
#include "src/core/device_ordinal.h"
#include "src/runtime/device_runtime.h"

namespace locus {
namespace memory {
namespace {

// Note [Memory calls without the device]
// PyTorch's torch.cuda memory calls answer on a machine without CUDA, so portable code need not
// guard them: memory_allocated() and its siblings return 0, memory_stats() is empty and
// empty_cache() does nothing (torch 1.13, CPU-only: they look at the allocator only once CUDA
// is initialised, whatever the index). Locus does the same for any device type this build or
// machine cannot use: no tensor can live there, so zero is the exact answer. Where the type is
// usable, the index is checked as everywhere else (cuda:7 on a one-GPU machine is an
// IndexError), as PyTorch does once CUDA is up. mem_get_info still throws: a device that is not
// there has no free or total memory to report (torch raises too).

// The allocator serving `device`, or null when its type is unusable here (cpu always serves).
runtime::Allocator* allocator_or_null(Device device) {
  if (!device.is_cpu() && !locus::is_available(device.type())) return nullptr;
  return &runtime::allocator_for(device);
}

}  // namespace

int64_t memory_allocated(Device device) { return memory_stats(device).allocated_bytes.current; }
int64_t memory_reserved(Device device) { return memory_stats(device).reserved_bytes.current; }
int64_t max_memory_allocated(Device device) { return memory_stats(device).allocated_bytes.peak; }
int64_t max_memory_reserved(Device device) { return memory_stats(device).reserved_bytes.peak; }

void reset_peak_memory_stats(Device device) {
  if (runtime::Allocator* a = allocator_or_null(device)) a->reset_peak_stats();
}

void empty_cache(Device device) {
  if (runtime::Allocator* a = allocator_or_null(device)) a->empty_cache();
}

MemoryStats memory_stats(Device device) {
  const runtime::Allocator* a = allocator_or_null(device);
  return a ? a->stats() : MemoryStats{};
}

std::pair<uint64_t, uint64_t> mem_get_info(Device device) {
  const Device d = runtime::resolve_device(device);
  return runtime::runtime(d.type()).mem_get_info(detail::ordinal(d));
}

std::string memory_summary(Device device) {
  // An unusable type has nothing to resolve the index against: the table names the device as given.
  const Device d = allocator_or_null(device) ? runtime::resolve_device(device) : device;
  const MemoryStats s = memory_stats(d);
  std::ostringstream os;
  char line[160];
  auto rule = [&] { os << std::string(75, '=') << "\n"; };
  rule();
  std::snprintf(line, sizeof line, "| Locus memory summary, device %-44s|\n", d.str().c_str());
  os << line;
  rule();
  std::snprintf(line, sizeof line, "| %-22s| %11s | %11s | %11s | %11s|\n", "Metric", "Cur Usage", "Peak Usage", "Tot Alloc",
                "Tot Freed");
  os << line;
  rule();
  auto bytes_row = [&](const char* name, const StatCounter& c) {
    std::snprintf(line, sizeof line, "| %-22s| %11s | %11s | %11s | %11s|\n", name, format_bytes(c.current).c_str(),
                  format_bytes(c.peak).c_str(), format_bytes(c.allocated).c_str(), format_bytes(c.freed).c_str());
    os << line;
  };
  auto count_row = [&](const char* name, const StatCounter& c) {
    std::snprintf(line, sizeof line, "| %-22s| %11lld | %11lld | %11lld | %11lld|\n", name, static_cast<long long>(c.current),
                  static_cast<long long>(c.peak), static_cast<long long>(c.allocated), static_cast<long long>(c.freed));
    os << line;
  };
  bytes_row("Allocated memory", s.allocated_bytes);
  bytes_row("Active memory", s.active_bytes);
  bytes_row("Requested memory", s.requested_bytes);
  bytes_row("Reserved memory", s.reserved_bytes);
  count_row("Allocations", s.allocation);
  count_row("Segments", s.segment);
  rule();
  std::snprintf(line, sizeof line, "| Allocation retries: %-8lld  Out-of-memory errors: %-21lld|\n",
                static_cast<long long>(s.num_alloc_retries), static_cast<long long>(s.num_ooms));
  os << line;
  rule();
  return os.str();
}

MemoryStats host_pinned_memory_stats() { return runtime::pinned_allocator().stats(); }
void host_pinned_empty_cache() { runtime::pinned_allocator().empty_cache(); }

}  // namespace memory

namespace cuda {
namespace {
Device cuda_device(int index) { return Device(DeviceType::CUDA, index); }
}  // namespace

bool is_available() noexcept { return locus::is_available(DeviceType::CUDA); }
int device_count() noexcept { return locus::device_count(DeviceType::CUDA); }
std::string unavailable_reason() { return runtime::unavailable_reason(DeviceType::CUDA); }
std::string get_device_name(int index) { return get_device_properties(index).name; }
DeviceProperties get_device_properties(int index) { return locus::get_device_properties(cuda_device(index)); }
std::string driver_version() { return is_available() ? get_device_properties(0).driver_version : ""; }
std::string runtime_version() { return is_available() ? get_device_properties(0).runtime_version : ""; }
int current_device() { return locus::current_device(DeviceType::CUDA).index(); }
void set_device(int index) { locus::set_device(cuda_device(index)); }

int64_t memory_allocated(int index) { return memory::memory_allocated(cuda_device(index)); }
int64_t memory_reserved(int index) { return memory::memory_reserved(cuda_device(index)); }
int64_t max_memory_allocated(int index) { return memory::max_memory_allocated(cuda_device(index)); }
int64_t max_memory_reserved(int index) { return memory::max_memory_reserved(cuda_device(index)); }
void reset_peak_memory_stats(int index) { memory::reset_peak_memory_stats(cuda_device(index)); }
void empty_cache(int index) { memory::empty_cache(cuda_device(index)); }
MemoryStats memory_stats(int index) { return memory::memory_stats(cuda_device(index)); }
std::string memory_summary(int index) { return memory::memory_summary(cuda_device(index)); }
std::pair<uint64_t, uint64_t> mem_get_info(int index) { return memory::mem_get_info(cuda_device(index)); }

}  // namespace cuda
}  // namespace locus
