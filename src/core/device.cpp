#include "locus/device.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <ostream>
#include <string>

#include "locus/errors.h"

namespace locus {
namespace {

[[noreturn]] void reject(std::string_view spec, std::string_view why) {
  throw ValueError("invalid device string '" + std::string(spec) + "' (" + std::string(why) +
                   "): expected 'cpu', 'cuda', 'cuda:N', 'mps', 'sim' or 'sim:N', lower-case, with N a decimal "
                   "index such as 'cuda:0'");
}

// Note [Device type table]
// Every device type's names, once: the spelling in device strings and printing, the name in
// messages, and why a build may lack it. Device::Device(string), device_type_name,
// device_type_display_name and device_type_missing_reason all read this table.
struct DeviceTypeInfo {
  DeviceType type;
  const char* name;     // "cuda": device strings, printing
  const char* display;  // "CUDA": messages
  const char* missing;  // why a build or machine has no backend for it
};

constexpr DeviceTypeInfo kDeviceTypes[] = {
    {DeviceType::CPU, "cpu", "CPU", "built without a CPU backend"},
    {DeviceType::CUDA, "cuda", "CUDA", "built without CUDA"},
    {DeviceType::MPS, "mps", "MPS",
     "MPS is Apple's Metal backend and needs macOS on Apple silicon; this build has no MPS backend"},
    {DeviceType::Sim, "sim", "sim", "built without the sim backend"},
};
static_assert(std::size(kDeviceTypes) == static_cast<size_t>(kNumDeviceTypes), "one row per DeviceType");

const DeviceTypeInfo& info_of(DeviceType type) noexcept {
  for (const DeviceTypeInfo& info : kDeviceTypes)
    if (info.type == type) return info;
  static constexpr DeviceTypeInfo kUnknown{DeviceType::CPU, "?", "?", "?"};
  return kUnknown;
}

}  // namespace

std::string_view device_type_display_name(DeviceType type) noexcept { return info_of(type).display; }

std::string_view device_type_missing_reason(DeviceType type) noexcept { return info_of(type).missing; }

std::string_view device_type_name(DeviceType type) noexcept { return info_of(type).name; }

Device::Device(DeviceType type, int index) : type_(type), index_(0) {
  if (index < -1 || index > 127)
    throw ValueError("device index " + std::to_string(index) + " is out of range for " +
                     std::string(device_type_name(type)) + ": use -1 (current device) or 0..127");
  if (type == DeviceType::CPU && index > 0)
    throw ValueError("the CPU is a single device: index " + std::to_string(index) + " is invalid (use 'cpu')");
  index_ = static_cast<int8_t>(type == DeviceType::CPU ? -1 : index);
}

std::string_view Device::checked_spec(const char* spec) {
  if (spec == nullptr) throw ValueError("a device cannot be made from a null string");
  return spec;
}

int Device::checked_index(int64_t index) {
  if (index < 0) throw ValueError("Device index must not be negative, got " + std::to_string(index));
  return static_cast<int>(std::min<int64_t>(index, std::numeric_limits<int>::max()));
}

Device::Device(std::string_view spec) : type_(DeviceType::CPU), index_(-1) {
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const auto* known = std::find_if(std::begin(kDeviceTypes), std::end(kDeviceTypes),
                                   [&](const DeviceTypeInfo& info) { return name == info.name; });
  if (known == std::end(kDeviceTypes)) reject(spec, "unknown device type '" + std::string(name) + "'");
  type_ = known->type;
  if (colon == std::string_view::npos) return;
  const std::string_view digits = spec.substr(colon + 1);
  if (digits.empty()) reject(spec, "missing index after ':'");
  if (digits.size() > 1 && digits[0] == '0') reject(spec, "index has a leading zero");
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') reject(spec, "index is not a decimal number");
    value = value * 10 + (c - '0');
    if (value > 127) reject(spec, "index is larger than 127");
  }
  if (type_ == DeviceType::CPU && value != 0) reject(spec, "the CPU has only index 0");
  index_ = static_cast<int8_t>(type_ == DeviceType::CPU ? -1 : value);
}

std::string Device::str() const {
  std::string s(device_type_name(type_));
  if (index_ >= 0) s.append(":").append(std::to_string(index_));
  return s;
}

std::ostream& operator<<(std::ostream& os, Device device) { return os << device.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType type) { return os << device_type_name(type); }

}  // namespace locus
