// The sim DeviceRuntime: N devices of host memory, each behind its own CachingAllocator with a
// capacity, running the CPU kernels. See docs/devices.md.

#include "src/backends/sim/sim_runtime.h"

#include <bitset>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "locus/errors.h"
#include "locus/accelerator.h"
#include "locus/sim.h"
#include "src/backends/cpu/cpu_kernels.h"
#include "src/runtime/caching_allocator.h"
#include "src/runtime/host_memory.h"

namespace locus::sim_backend {
namespace {

// "4096", "512M", "2G", "1GiB": bytes with an optional binary suffix.
uint64_t parse_bytes(const std::string& text, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  std::string suffix(end ? end : "");
  uint64_t mult = 1;
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "KiB") mult = uint64_t{1} << 10;
  else if (suffix == "M" || suffix == "MiB") mult = uint64_t{1} << 20;
  else if (suffix == "G" || suffix == "GiB") mult = uint64_t{1} << 30;
  else end = nullptr;
  if (!end || end == text.c_str() || v <= 0)
    throw ValueError(std::string(what) + "='" + text +
                     "' is not a size: expected bytes as a positive number, optionally followed by K, M or G "
                     "(e.g. 4294967296 or 4G)");
  return static_cast<uint64_t>(v * static_cast<double>(mult));
}

sim::Config config_from_env() {
  sim::Config c;
  if (const char* env = std::getenv("LOCUS_SIM_DEVICES")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (!end || *end || end == env || n < 1 || n > 64)
      throw ValueError(std::string("LOCUS_SIM_DEVICES='") + env + "' is not a device count: expected an integer from 1 to 64");
    c.device_count = static_cast<int>(n);
  }
  if (const char* env = std::getenv("LOCUS_SIM_MEMORY")) c.memory_bytes = parse_bytes(env, "LOCUS_SIM_MEMORY");
  return c;
}

thread_local int t_current_sim_device = 0;

class SimRuntime final : public runtime::DeviceRuntime {
 public:
  DeviceType type() const noexcept override { return DeviceType::Sim; }
  bool is_available() const noexcept override { return true; }
  int device_count() const noexcept override {
    std::lock_guard lock(mutex_);
    try {
      ensure_configured();
    } catch (...) {
      return 0;
    }
    return config_.device_count;
  }
  std::string unavailable_reason() const override { return {}; }
  int current_device() const override { return t_current_sim_device; }
  void set_device(int index) override { t_current_sim_device = index; }
  runtime::Allocator& allocator(int index) override {
    std::lock_guard lock(mutex_);
    ensure_configured();
    return *allocators_.at(static_cast<size_t>(index));
  }
  std::unique_ptr<detail::PendingWork> copy_bytes(const runtime::CopyRequest& r) override {
    if (r.n) std::memcpy(r.dst, r.src, r.n);
    return nullptr;
  }
  void synchronize(int) override {}
  std::pair<uint64_t, uint64_t> mem_get_info(int index) override {
    std::lock_guard lock(mutex_);
    ensure_configured();
    return memories_.at(static_cast<size_t>(index))->mem_get_info();
  }
  const ops::KernelTable* kernels() const noexcept override { return &cpu::kernel_table(); }
  bool host_addressable() const noexcept override { return true; }
  cuda::DeviceProperties properties(int index) const override {
    std::lock_guard lock(mutex_);
    ensure_configured();
    return {"Locus simulated device " + std::to_string(index), config_.memory_bytes, 1, 0, 0};
  }
  bool supports(ops::OpId op, DType dtype) const noexcept override {
    std::lock_guard lock(mutex_);
    return !unsupported_[static_cast<size_t>(op) * kNumDTypes + static_cast<size_t>(dtype)];
  }

  sim::Config config() {
    std::lock_guard lock(mutex_);
    ensure_configured();
    return config_;
  }

  void configure(const sim::Config& c) {
    if (c.device_count < 1 || c.device_count > 64)
      throw ValueError("sim::configure: device_count " + std::to_string(c.device_count) + " is outside 1..64");
    if (c.memory_bytes == 0) throw ValueError("sim::configure: memory_bytes must be positive");
    std::bitset<ops::kNumOps * kNumDTypes> unsupported;
    for (const std::string& entry : c.unsupported_ops) {
      const auto colon = entry.find(':');
      const std::string name = entry.substr(0, colon);
      const auto op = ops::op_from_name(name);
      if (!op) throw ValueError("sim::configure: unknown op '" + name + "' in unsupported_ops");
      for (int d = 0; d < kNumDTypes; ++d) {
        const auto dt = static_cast<DType>(d);
        if (colon == std::string::npos || entry.substr(colon + 1) == dtype_name(dt))
          unsupported[static_cast<size_t>(*op) * kNumDTypes + d] = true;
      }
    }
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < allocators_.size(); ++i) {
      const int64_t held = allocators_[i]->stats().allocated_bytes.current;
      if (held != 0)
        throw ValueError("sim::configure: sim:" + std::to_string(i) + " still holds " + format_bytes(static_cast<uint64_t>(held)) +
                         " of tensors; destroy them before reconfiguring the sim devices");
    }
    build(c);
    unsupported_ = unsupported;
  }

  void reset() { configure(config_from_env()); }

 private:
  void ensure_configured() const {
    if (!configured_) const_cast<SimRuntime*>(this)->build(config_from_env());
  }
  void build(const sim::Config& c) {
    allocators_.clear();
    memories_.clear();
    for (int i = 0; i < c.device_count; ++i) {
      auto memory = std::make_unique<runtime::HostMemory>(c.memory_bytes);
      memories_.push_back(memory.get());
      allocators_.push_back(std::make_unique<runtime::CachingAllocator>(Device(DeviceType::Sim, i), std::move(memory)));
    }
    config_ = c;
    configured_ = true;
  }

  mutable std::mutex mutex_;
  bool configured_ = false;
  sim::Config config_;
  std::vector<std::unique_ptr<runtime::CachingAllocator>> allocators_;
  std::vector<runtime::HostMemory*> memories_;
  std::bitset<ops::kNumOps * kNumDTypes> unsupported_;
};

SimRuntime& instance() {
  static SimRuntime runtime;
  return runtime;
}

}  // namespace

runtime::DeviceRuntime& sim_runtime() { return instance(); }

}  // namespace locus::sim_backend

namespace locus::sim {

Config config() { return sim_backend::instance().config(); }
void configure(const Config& c) { sim_backend::instance().configure(c); }
void reset_config() { sim_backend::instance().reset(); }
int device_count() noexcept { return sim_backend::instance().device_count(); }
int current_device() { return sim_backend::instance().current_device(); }
void set_device(int index) { locus::set_device(Device(DeviceType::Sim, index)); }

}  // namespace locus::sim
