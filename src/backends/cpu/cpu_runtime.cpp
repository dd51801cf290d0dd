// The CPU DeviceRuntime.

#include <cstring>

#include "src/backends/cpu/cpu_allocator.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/cpu_runtime.h"
#include "src/runtime/host_memory.h"
#include "src/backends/cpu/parallel.h"

namespace locus::cpu {
namespace {

class CpuRuntime final : public runtime::DeviceRuntime {
 public:
  DeviceType type() const noexcept override { return DeviceType::CPU; }
  bool is_available() const noexcept override { return true; }
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
  const ops::KernelTable* kernels() const noexcept override { return &kernel_table(); }
  bool host_addressable() const noexcept override { return true; }
  cuda::DeviceProperties properties(int) const override {
    return {"cpu", runtime::host_mem_info().second, max_threads(), 0, 0};
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
