// The sim DeviceRuntime: N devices of host memory, each behind its own CachingAllocator with a
// capacity; the registration file gives them the CPU kernels. See docs/devices.md.

#include "src/backends/sim/sim_runtime.h"

#include <atomic>
#include <bitset>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "locus/errors.h"
#include "locus/accelerator.h"
#include "locus/sim.h"
#include "src/ops/op_id.h"
#include "src/runtime/caching_allocator.h"
#include "src/runtime/host_memory.h"

namespace locus::sim_backend {
namespace {

// Note [Byte sizes]
// LOCUS_SIM_MEMORY takes the units people write, with their usual meanings: the SI ones are
// powers of 1000 (KB, MB, GB, TB, as disks and Kubernetes count), the IEC ones powers of 1024
// (KiB, MiB, GiB, TiB, and Kubernetes' Ki, Mi, Gi, Ti). A bare letter (K, M, G, T) is a power
// of 1024, as in `docker --memory 1g`, the JVM's -Xmx1G and GNU tools, and as Locus always read
// it: Kubernetes alone reads "1G" as 10^9. Units are case-insensitive ("64mb"), and a space may
// separate the number from its unit ("64 MB").
uint64_t parse_bytes(const std::string& text, const char* what) {
  // A decimal number (strtod alone would also take "0x10", "inf" and "nan"), then a unit.
  const std::string number = text.substr(0, text.find_first_not_of("0123456789.eE+-"));
  const size_t unit_start = text.find_first_not_of(' ', number.size());
  std::string unit = unit_start == std::string::npos ? "" : text.substr(unit_start);
  for (char& ch : unit) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  char* end = nullptr;
  const double v = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  // Spaces only between a number and its unit, never after the number alone.
  const bool trailing_spaces = unit_start == std::string::npos && number.size() < text.size();
  bool ok = !number.empty() && end == number.c_str() + number.size() && !trailing_spaces;
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1},           {"b", 1},
      {"kb", 1e3},       {"mb", 1e6},       {"gb", 1e9},       {"tb", 1e12},
      {"k", 0x1p10},     {"m", 0x1p20},     {"g", 0x1p30},     {"t", 0x1p40},
      {"ki", 0x1p10},    {"mi", 0x1p20},    {"gi", 0x1p30},    {"ti", 0x1p40},
      {"kib", 0x1p10},   {"mib", 0x1p20},   {"gib", 0x1p30},   {"tib", 0x1p40}};
  double mult = 0;
  for (const auto& [name, factor] : kUnits)
    if (unit == name) mult = factor;
  ok = ok && mult > 0;
  // A size below one byte or a fractional byte count is no size, and 2^62 bytes is far beyond
  // any machine (and converts to uint64 exactly).
  const double bytes = v * mult;
  if (!ok || !(bytes >= 1 && bytes <= 0x1p62) || bytes != std::floor(bytes))
    throw ValueError(std::string(what) + "='" + text +
                     "' is not a size: expected a whole number of bytes from 1 to 2^62, or a number and a unit: KB, MB, "
                     "GB, TB (powers of 1000), KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024), e.g. 4294967296, "
                     "64MB, 64MiB or 4G");
  return static_cast<uint64_t>(bytes);
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

// One configuration of the sim devices with their allocators, immutable once published.
// Note [Sim without locks]: ops read the published state with one atomic load; configure()
// builds a new state under a mutex and publishes it. A replaced state is emptied but kept
// until the process ends (a thread may still be reading it), so each configure() that changes
// the configuration leaves about 600 bytes per device behind, never tensor memory.
struct SimState {
  sim::Config config;
  std::vector<std::unique_ptr<runtime::CachingAllocator>> allocators;
  std::vector<runtime::HostMemory*> memories;
  std::bitset<ops::kNumOps * kNumDTypes> unsupported;

  explicit SimState(const sim::Config& c, std::bitset<ops::kNumOps * kNumDTypes> lacks) : config(c), unsupported(lacks) {
    for (int i = 0; i < c.device_count; ++i) {
      auto memory = std::make_unique<runtime::HostMemory>(c.memory_bytes);
      memories.push_back(memory.get());
      allocators.push_back(std::make_unique<runtime::CachingAllocator>(Device(DeviceType::Sim, i), std::move(memory)));
    }
  }
};

std::bitset<ops::kNumOps * kNumDTypes> parse_unsupported(const std::vector<std::string>& entries) {
  std::bitset<ops::kNumOps * kNumDTypes> unsupported;
  for (const std::string& entry : entries) {
    const auto colon = entry.find(':');
    const std::string name = entry.substr(0, colon);
    bool known = false;
    for (int op = 0; op < ops::kNumOps; ++op) {
      if (ops::op_name(static_cast<ops::OpId>(op)) != name) continue;
      known = true;
      for (int d = 0; d < kNumDTypes; ++d)
        if (colon == std::string::npos || entry.substr(colon + 1) == dtype_name(static_cast<DType>(d)))
          unsupported[static_cast<size_t>(op) * kNumDTypes + d] = true;
    }
    if (!known) throw ValueError("sim::configure: unknown op '" + name + "' in unsupported_ops");
  }
  return unsupported;
}

class SimRuntime final : public runtime::DeviceRuntime {
 public:
  DeviceType type() const noexcept override { return DeviceType::Sim; }
  int device_count() const noexcept override {
    const SimState* s = state_or_null();
    return s ? s->config.device_count : 0;
  }
  std::string unavailable_reason() const override {
    std::lock_guard lock(configure_mutex_);
    return env_error_;
  }
  int current_device() const override { return t_current_sim_device; }
  void set_device(int index) override { t_current_sim_device = index; }
  runtime::Allocator& allocator(int index) override { return *state().allocators.at(static_cast<size_t>(index)); }
  std::unique_ptr<detail::PendingWork> copy_bytes(const runtime::CopyRequest& r) override {
    if (r.n) std::memcpy(r.dst, r.src, r.n);
    return nullptr;
  }
  void synchronize(int) override {}
  std::pair<uint64_t, uint64_t> mem_get_info(int index) override {
    return state().memories.at(static_cast<size_t>(index))->mem_get_info();
  }
  runtime::Capabilities capabilities() const noexcept override { return {.host_addressable = true, .asynchronous = false}; }
  DeviceProperties properties(int index) const override {
    DeviceProperties p;
    p.name = "Locus simulated device " + std::to_string(index);
    p.total_memory = state().config.memory_bytes;
    p.multi_processor_count = 1;
    p.host_addressable = true;
    return p;
  }
  bool supports(ops::OpId op, DType dtype) const noexcept {
    const SimState* s = state_or_null();
    return !s || !s->unsupported[static_cast<size_t>(op) * kNumDTypes + static_cast<size_t>(dtype)];
  }

  sim::Config config() { return state().config; }

  void configure(const sim::Config& c) {
    if (c.device_count < 1 || c.device_count > 64)
      throw ValueError("sim::configure: device_count " + std::to_string(c.device_count) + " is outside 1..64");
    if (c.memory_bytes == 0) throw ValueError("sim::configure: memory_bytes must be positive");
    const auto unsupported = parse_unsupported(c.unsupported_ops);
    std::lock_guard lock(configure_mutex_);
    if (const SimState* old = state_.load(std::memory_order_acquire)) {
      for (size_t i = 0; i < old->allocators.size(); ++i) {
        const int64_t held = old->allocators[i]->stats().allocated_bytes.current;
        if (held != 0)
          throw ValueError("sim::configure: sim:" + std::to_string(i) + " still holds " +
                           format_bytes(static_cast<uint64_t>(held)) +
                           " of tensors; destroy them before reconfiguring the sim devices");
      }
      for (const auto& a : old->allocators) a->empty_cache();
      // The same configuration again changes nothing: no new state is published, so a program
      // that re-applies its configuration (reset_config() in a loop) holds no more memory.
      if (old->config.device_count == c.device_count && old->config.memory_bytes == c.memory_bytes &&
          old->config.unsupported_ops == c.unsupported_ops) {
        env_error_.clear();
        return;
      }
    }
    publish(c, unsupported);
  }

  void reset() { configure(config_from_env()); }

 private:
  const SimState* state_or_null() const noexcept {
    if (const SimState* s = state_.load(std::memory_order_acquire)) return s;
    try {
      return &const_cast<SimRuntime*>(this)->first_state();
    } catch (...) {
      return nullptr;  // a malformed LOCUS_SIM_* variable: no sim devices, the reason kept
    }
  }
  const SimState& state() const {
    if (const SimState* s = state_.load(std::memory_order_acquire)) return *s;
    return const_cast<SimRuntime*>(this)->first_state();
  }
  // The configuration from the environment, made once, on first use.
  const SimState& first_state() {
    std::lock_guard lock(configure_mutex_);
    if (const SimState* s = state_.load(std::memory_order_acquire)) return *s;
    try {
      const sim::Config c = config_from_env();
      publish(c, parse_unsupported(c.unsupported_ops));
    } catch (const Error& e) {
      env_error_ = e.what();
      throw;
    }
    return *state_.load(std::memory_order_acquire);
  }
  void publish(const sim::Config& c, const std::bitset<ops::kNumOps * kNumDTypes>& unsupported) {
    states_.push_back(std::make_unique<SimState>(c, unsupported));
    state_.store(states_.back().get(), std::memory_order_release);
    env_error_.clear();
  }

  std::atomic<const SimState*> state_{nullptr};
  mutable std::mutex configure_mutex_;
  std::vector<std::unique_ptr<SimState>> states_;  // every state published, see the Note
  std::string env_error_;
};

SimRuntime& instance() {
  static SimRuntime runtime;
  return runtime;
}

}  // namespace

runtime::DeviceRuntime& sim_runtime() { return instance(); }

bool sim_supports(ops::OpId op, DType dtype) noexcept { return instance().supports(op, dtype); }

}  // namespace locus::sim_backend

namespace locus::sim {

Config config() { return sim_backend::instance().config(); }
void configure(const Config& c) { sim_backend::instance().configure(c); }
void reset_config() { sim_backend::instance().reset(); }
int device_count() noexcept { return sim_backend::instance().device_count(); }
int current_device() { return sim_backend::instance().current_device(); }
void set_device(int index) {
  // Device(kSim, -1) means "the current one"; as an argument to set_device it is a mistake.
  if (index < 0) throw IndexError("sim::set_device: device index " + std::to_string(index) + " is negative");
  locus::set_device(Device(DeviceType::Sim, index));
}

}  // namespace locus::sim
