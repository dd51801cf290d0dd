// amp::AutocastGuard and the questions about autocast's state: the public face of the thread
// state in src/ops/autocast.cpp (Note [Autocast]).

#include "locus/amp/autocast.h"

#include <string>

#include "locus/device_properties.h"
#include "locus/errors.h"
#include "src/ops/autocast.h"
#include "src/runtime/device_runtime.h"

namespace locus::amp {
namespace {

std::string prefix(DeviceType type, DType dtype) {
  return "[locus::amp] autocast on " + std::string(device_type_name(type)) + " in " + std::string(dtype_name(dtype)) + ": ";
}

}  // namespace

DType default_autocast_dtype(DeviceType type) noexcept {
  return type == DeviceType::CPU ? DType::BFloat16 : DType::Float16;
}

void check_autocast_support(DeviceType type, DType dtype) {
  if (dtype != DType::Float16 && dtype != DType::BFloat16)
    throw ValueError(prefix(type, dtype) + "autocast runs ops in a lower precision, float16 or bfloat16; " +
                     std::string(dtype_name(dtype)) + " is not one (to switch autocast off in a region, pass enabled=false)");
  const std::string why_not = runtime::unavailable_reason(type);
  if (!why_not.empty()) throw ValueError(prefix(type, dtype) + "this device type cannot be used: " + why_not);
  // The lists' lower-precision ops are products: a device type without a product kernel in
  // this dtype (a sim device configured to lack it) cannot run them.
  if (!ops::has_product_kernel(type, dtype))
    throw ValueError(prefix(type, dtype) + "the device type has no " + std::string(dtype_name(dtype)) +
                     " matmul kernel, so autocast's lower-precision ops could not run there");
  if (type == DeviceType::CUDA && dtype == DType::BFloat16) {
    const DeviceProperties p = get_device_properties(Device(DeviceType::CUDA));
    if (p.major < 8)
      throw ValueError(prefix(type, dtype) + p.name + " (compute capability " + std::to_string(p.major) + "." +
                       std::to_string(p.minor) + ") has no bfloat16 tensor-core products; use float16 with a GradScaler");
  }
}

AutocastGuard::AutocastGuard(DeviceType type, std::optional<DType> dtype, bool enabled, bool cache_enabled)
    : type_(type) {
  const DType lower = dtype.value_or(default_autocast_dtype(type));
  if (enabled) check_autocast_support(type, lower);
  // A disabled guard keeps the dtype in force, so autocast_dtype() answers the same inside.
  const auto previous = ops::set_autocast(type, enabled, enabled ? lower : ops::autocast_lower_precision(type));
  previous_enabled_ = previous.first;
  previous_dtype_ = previous.second;
  previous_cache_enabled_ = ops::enter_autocast_region(cache_enabled);
}

AutocastGuard::AutocastGuard(DeviceType type, bool enabled) : AutocastGuard(type, std::nullopt, enabled) {}

AutocastGuard::~AutocastGuard() {
  ops::set_autocast(type_, previous_enabled_, previous_dtype_);
  ops::leave_autocast_region(previous_cache_enabled_);
}

bool is_autocast_enabled(DeviceType type) noexcept { return ops::autocast_enabled(type); }

DType autocast_dtype(DeviceType type) noexcept { return ops::autocast_lower_precision(type); }

AutocastCounts autocast_counts() noexcept {
  const ops::AutocastCounts c = ops::autocast_counts();
  return {c.casts, c.cache_hits};
}

}  // namespace locus::amp
