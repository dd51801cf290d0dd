#pragma once
/// \file device.h
/// Device identity: where a tensor's memory lives and where its ops run.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>

namespace locus {

/// Every device type Locus knows, once, in DeviceType's order (Note [Device type table],
/// src/core/device.cpp): X(enumerator, name in device strings, name in messages, whether its
/// devices are told apart by an index ("cuda:1"), why a build may lack its backend). A new device type is one row here;
/// its backend registers in src/backends/register_backends.cpp (docs/design.md, "Backends").
#define LOCUS_DEVICE_TYPES(X)                                                                         \
  X(CPU, "cpu", "CPU", false, "built without a CPU backend")                                          \
  X(CUDA, "cuda", "CUDA", true, "built without CUDA")                                                 \
  X(MPS, "mps", "MPS", false,                                                                         \
    "MPS is Apple's Metal backend and needs macOS on Apple silicon; this build has no MPS backend") \
  X(Sim, "sim", "sim", true, "built without the sim backend")

/// The kinds of device Locus knows (CPU = 0, CUDA = 1, MPS = 2, Sim = 3). `Sim` is a simulated
/// accelerator that lives in host memory behind its own allocator; it obeys every placement rule
/// CUDA does (see docs/devices.md).
enum class DeviceType : int8_t {
#define LOCUS_DEVICE_TYPE_ENUMERATOR(type, ...) type,
  LOCUS_DEVICE_TYPES(LOCUS_DEVICE_TYPE_ENUMERATOR)
#undef LOCUS_DEVICE_TYPE_ENUMERATOR
};

/// Number of entries in DeviceType; sizes per-type tables.
inline constexpr int kNumDeviceTypes = 0
#define LOCUS_DEVICE_TYPE_COUNT(...) +1
    LOCUS_DEVICE_TYPES(LOCUS_DEVICE_TYPE_COUNT);
#undef LOCUS_DEVICE_TYPE_COUNT

/// Lower-case name used in device strings: "cpu", "cuda", "mps", "sim".
std::string_view device_type_name(DeviceType type) noexcept;
/// The name people write in prose and messages: "CPU", "CUDA", "MPS", "sim".
std::string_view device_type_display_name(DeviceType type) noexcept;
/// Why a build may lack the backend of `type` ("built without CUDA"), for messages.
std::string_view device_type_missing_reason(DeviceType type) noexcept;
/// The accelerator types best_device() tries, most preferred first (CUDA, then MPS).
inline constexpr DeviceType kPreferredAccelerators[] = {DeviceType::CUDA, DeviceType::MPS};

/// A device: a type plus an index. Index -1 means "the current device of that type" and is
/// resolved when the device is used; a tensor's device always carries a concrete index for
/// CUDA and sim. Cheap to copy, comparable and hashable.
class Device {
 public:
  /// Device of `type`; `index` -1 means the current device of that type. Throws ValueError for
  /// an index below -1, or any index other than -1/0 for the CPU.
  Device(DeviceType type, int index = -1);
  /// Parses "cpu", "cuda", "cuda:1", "mps", "sim:0". Strict: lower-case type, optional ':' plus
  /// a decimal index. Anything else throws ValueError naming the string and the accepted forms.
  /* implicit */ Device(std::string_view spec);
  /// As above. A null pointer throws ValueError instead of crashing.
  /* implicit */ Device(const char* spec) : Device(checked_spec(spec)) {}
  /// An integer is a CUDA device index, as in PyTorch: `x.to(0)`, `Device(1)`, `DeviceGuard
  /// g(2)`. ValueError for a negative index.
  template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool> && !std::is_same_v<I, char>)
  /* implicit */ Device(I index) : Device(DeviceType::CUDA, checked_index(static_cast<int64_t>(index))) {}
  /* implicit */ Device(const std::string& spec) : Device(std::string_view(spec)) {}

  /// The device type.
  DeviceType type() const noexcept { return type_; }
  /// The index, or -1 when unspecified.
  int index() const noexcept { return index_; }
  /// True when an explicit index was given (always true for tensors' devices off the CPU).
  bool has_index() const noexcept { return index_ >= 0; }
  bool is_cpu() const noexcept { return type_ == DeviceType::CPU; }
  bool is_cuda() const noexcept { return type_ == DeviceType::CUDA; }
  bool is_sim() const noexcept { return type_ == DeviceType::Sim; }
  bool is_mps() const noexcept { return type_ == DeviceType::MPS; }

  /// "cpu", "cuda", "cuda:0", "sim:1" (the CPU always prints as "cpu").
  std::string str() const;

  friend bool operator==(Device a, Device b) noexcept {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend bool operator!=(Device a, Device b) noexcept { return !(a == b); }

 private:
  static std::string_view checked_spec(const char* spec);
  static int checked_index(int64_t index);

  DeviceType type_;
  int8_t index_;
};

// LibTorch's names for the device types: `Device(kCUDA, 1)`, `x.to(kCPU)`.
inline constexpr DeviceType kCPU = DeviceType::CPU;    ///< the host
inline constexpr DeviceType kCUDA = DeviceType::CUDA;  ///< NVIDIA GPUs
inline constexpr DeviceType kMPS = DeviceType::MPS;    ///< Apple GPUs (never available in this build)

/// Prints `device.str()`.
std::ostream& operator<<(std::ostream& os, Device device);
/// Prints the lower-case type name.
std::ostream& operator<<(std::ostream& os, DeviceType type);

}  // namespace locus

/// Hash support so Device can key unordered containers.
template <>
struct std::hash<locus::Device> {
  size_t operator()(locus::Device d) const noexcept {
    return (static_cast<size_t>(d.type()) << 8) ^ static_cast<size_t>(d.index() + 1);
  }
};

LOCUS_API_END
