#include "locus/device.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "locus/errors.h"

namespace locus {
namespace {

// Note [Device type table]
// Every device type's names, once (LOCUS_DEVICE_TYPES, include/locus/device.h): the spelling in
// device strings and printing, the name in messages, whether its devices are told apart by an
// index, and why a build may lack it. The enum, kNumDeviceTypes, Device::Device(string) and its error
// message, device_type_name, device_type_display_name and device_type_missing_reason all come
// from that one list.
struct DeviceTypeInfo {
  DeviceType type;
  const char* name;     // "cuda": device strings, printing
  const char* display;  // "CUDA": messages
  bool indexed;         // several devices: the message shows 'cuda:N' beside 'cuda'.
  const char* missing;  // why a build or machine has no backend for it
};

constexpr DeviceTypeInfo kDeviceTypes[] = {
#define LOCUS_DEVICE_TYPE_ROW(type, name, display, indexed, missing) {DeviceType::type, name, display, indexed, missing},
    LOCUS_DEVICE_TYPES(LOCUS_DEVICE_TYPE_ROW)
#undef LOCUS_DEVICE_TYPE_ROW
};

// "'cpu', 'cuda', 'cuda:N', ... or 'sim:N'": every spelling a device string can take.
std::string device_string_forms() {
  std::vector<std::string> forms;
  for (const DeviceTypeInfo& info : kDeviceTypes) {
    forms.push_back("'" + std::string(info.name) + "'");
    if (info.indexed) forms.push_back("'" + std::string(info.name) + ":N'");
  }
  std::string text;
  for (size_t i = 0; i < forms.size(); ++i) text += (i == 0 ? "" : i + 1 == forms.size() ? " or " : ", ") + forms[i];
  return text;
}

[[noreturn]] void reject(std::string_view spec, std::string_view why) {
  throw ValueError("invalid device string '" + std::string(spec) + "' (" + std::string(why) + "): expected " +
                   device_string_forms() + ", lower-case, with N a decimal index such as 'cuda:0'");
}

const DeviceTypeInfo& info_of(DeviceType type) noexcept {
  for (const DeviceTypeInfo& info : kDeviceTypes)
    if (info.type == type) return info;
  static constexpr DeviceTypeInfo kUnknown{DeviceType::CPU, "?", "?", false, "?"};
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
