// The CUDA DeviceRuntime: discovery that never throws and never creates a context, a caching
// allocator per device over cudaMalloc, copies on the current stream, streams and events, the
// pinned host pool.

#include "src/backends/cuda/cuda_device_runtime.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "locus/errors.h"
#include "src/backends/cuda/cuda_check.h"
#include "src/backends/cuda/cuda_module.h"
#include "src/backends/cuda/cuda_deferred_checks.h"
#include "src/backends/cuda/cuda_memory.h"
#include "src/backends/cuda/cuda_streams.h"
#include "src/backends/cuda/cuda_transfer.h"
#include "src/runtime/caching_allocator.h"

namespace locus::cuda_backend {
namespace {

std::string version_string(int v) { return v ? std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10) : ""; }

// What the machine offers, probed once: the driver library, then the runtime's device count.
struct Discovery {
  int count = 0;
  std::string reason;
  std::vector<DeviceProperties> properties;
};

Discovery probe() noexcept {
  Discovery d;
  d.reason = missing_driver_reason();
  if (!d.reason.empty()) return d;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    int driver = 0, rt = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&rt);
    if (err == cudaErrorNoDevice) d.reason = "no CUDA-capable device is detected";
    else if (err == cudaErrorInsufficientDriver)
      d.reason = "the NVIDIA driver (CUDA " + version_string(driver) + ") is older than the CUDA runtime Locus was built with (" +
                 version_string(rt) + ")";
    else d.reason = std::string("CUDA initialisation failed: ") + cudaGetErrorString(err);
    cudaGetLastError();
    return d;
  }
  int driver = 0, rt = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&rt);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceProperties props;
    props.name = p.name;
    props.total_memory = static_cast<uint64_t>(p.totalGlobalMem);
    props.multi_processor_count = p.multiProcessorCount;
    props.major = p.major, props.minor = p.minor;
    props.asynchronous = true;
    props.driver_version = version_string(driver), props.runtime_version = version_string(rt);
    char bus[32] = {};
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    props.pci_bus_id = bus;
    d.properties.push_back(std::move(props));
  }
  d.count = static_cast<int>(d.properties.size());
  if (d.count == 0) d.reason = "no CUDA-capable device is detected";
  return d;
}

thread_local int t_current_cuda_device = 0;

class CudaRuntime final : public runtime::DeviceRuntime {
 public:
  DeviceType type() const noexcept override { return DeviceType::CUDA; }
  int device_count() const noexcept override { return discovery().count; }
  std::string unavailable_reason() const override { return discovery().reason; }
  int current_device() const override { return t_current_cuda_device; }
  // As torch.cuda.set_device: the runtime's current device follows, so the user's own kernels
  // and cudaMalloc calls go where Locus's do.
  void set_device(int index) override {
    t_current_cuda_device = index;
    activate(index);
  }
  // A DeviceGuard going out of scope: the runtime follows only where a context already exists,
  // so restoring cuda:0 never creates a context on a device the program has not used.
  void restore_device(int index) override {
    t_current_cuda_device = index;
    if (was_activated(index)) activate(index);
  }
  runtime::Allocator& allocator(int index) override {
    std::call_once(allocators_once_, [&] {
      for (int i = 0; i < device_count(); ++i)
        allocators_.push_back(
            std::make_unique<runtime::CachingAllocator>(Device(DeviceType::CUDA, i), make_device_memory(i)));
    });
    return *allocators_.at(static_cast<size_t>(index));
  }
  std::unique_ptr<detail::PendingWork> copy_bytes(const runtime::CopyRequest& request) override {
    return copy(request);
  }
  void synchronize(int index) override {
    activate(index);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    raise_deferred_failures(index);
  }
  std::pair<uint64_t, uint64_t> mem_get_info(int index) override { return allocator_memory(index).mem_get_info(); }
  runtime::Capabilities capabilities() const noexcept override { return {.host_addressable = false, .asynchronous = true}; }
  DeviceProperties properties(int index) const override { return discovery().properties.at(static_cast<size_t>(index)); }
  std::unique_ptr<runtime::RawMemory> make_pinned_host_memory() override { return make_pinned_memory(); }
  runtime::StreamRuntime* streams() noexcept override { return &cuda_streams(); }

  static const Discovery& discovery() noexcept {
    static const Discovery d = probe();
    return d;
  }

 private:
  runtime::RawMemory& allocator_memory(int index) {
    return static_cast<runtime::CachingAllocator&>(allocator(index)).raw();
  }
  std::once_flag allocators_once_;
  std::vector<std::unique_ptr<runtime::CachingAllocator>> allocators_;
};

}  // namespace

runtime::DeviceRuntime& cuda_runtime() {
  static CudaRuntime instance;
  return instance;
}

}  // namespace locus::cuda_backend
