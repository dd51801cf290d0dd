// The CPU DeviceRuntime.

#include <cstring>

#include "src/backends/cpu/cpu_allocator.h"
#include "src/backends/cpu/cpu_runtime.h"
#include "src/runtime/host_memory.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

class CpuRuntime final : public runtime::DeviceRuntime {
 public:
  DeviceType type() const noexcept override { return DeviceType::CPU; }
  int device_count() const noexcept override { return 1; }
  std::string unavailable_reason() const override { return {}; }
  int current_device() const override { return 0; }
  void set_device(int) override {}
  runtime::Allocator& allocator(int) override { return allocator_; }
  std::unique_ptr<detail::PendingWork> copy_bytes(const runtime::CopyRequest& r) override {
    if (r.n) std::memcpy(r.dst, r.src, r.n);
    return nullptr;
  }
  void synchronize(int) override {}
  std::pair<uint64_t, uint64_t> mem_get_info(int) override { return runtime::host_mem_info(); }
  runtime::Capabilities capabilities() const noexcept override { return {.host_addressable = true, .asynchronous = false}; }
  DeviceProperties properties(int) const override {
    DeviceProperties p;
    p.name = "cpu";
    p.total_memory = runtime::host_mem_info().second;
    p.multi_processor_count = max_threads();
    p.host_addressable = true;
    return p;
  }

 private:
  CpuAllocator allocator_;
};

}  // namespace

runtime::DeviceRuntime& cpu_runtime() {
  static CpuRuntime instance;
  return instance;
}

}  // namespace locus::cpu
