#include "locus/device.h"

#include <algorithm>
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

}  // namespace

std::string_view device_type_display_name(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::CPU: return "CPU";
    case DeviceType::CUDA: return "CUDA";
    case DeviceType::MPS: return "MPS";
    case DeviceType::Sim: return "sim";
  }
  return "?";
}

std::string_view device_type_missing_reason(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::CPU: return "built without a CPU backend";
    case DeviceType::CUDA: return "built without CUDA";
    case DeviceType::MPS: return "MPS is Apple's Metal backend and needs macOS on Apple silicon; this build has no MPS backend";
    case DeviceType::Sim: return "built without the sim backend";
  }
  return "?";
}

std::string_view device_type_name(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::MPS: return "mps";
    case DeviceType::Sim: return "sim";
  }
  return "?";
}

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
  if (name == "cpu") type_ = DeviceType::CPU;
  else if (name == "cuda") type_ = DeviceType::CUDA;
  else if (name == "mps") type_ = DeviceType::MPS;
  else if (name == "sim") type_ = DeviceType::Sim;
  else reject(spec, "unknown device type '" + std::string(name) + "'");
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
