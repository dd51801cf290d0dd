#include "src/ops/scalar_fits.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "locus/errors.h"

namespace locus::ops {
namespace {

struct Range {
  double lowest, max;
};

Range range_of(DType dtype) {
  switch (dtype) {
    case DType::UInt8: return {-255.0, 255.0};
    case DType::Int8: return {-128.0, 127.0};
    case DType::Int16: return {-32768.0, 32767.0};
    case DType::Int32: return {-2147483648.0, 2147483647.0};
    case DType::Float16: return {-65504.0, 65504.0};
    case DType::BFloat16: return {-3.3895313892515355e38, 3.3895313892515355e38};
    case DType::Float32: return {-3.4028234663852886e38, 3.4028234663852886e38};
    default: return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
}

}  // namespace

void check_fits(const Scalar& value, DType dtype, OpId op) {
  if (dtype == DType::Bool || value.is_bool()) return;
  bool fits = true;
  if (value.is_integral()) {
    const int64_t i = value.to_int64();
    if (dtype != DType::Int64 && !is_floating_point(dtype)) {
      const Range r = range_of(dtype);
      fits = static_cast<double>(i) >= r.lowest && static_cast<double>(i) <= r.max;
    } else if (is_floating_point(dtype)) {
      fits = std::abs(static_cast<double>(i)) <= range_of(dtype).max;
    }
  } else {
    const double d = value.to_double();
    if (is_floating_point(dtype)) {
      fits = !std::isfinite(d) || (d >= range_of(dtype).lowest && d <= range_of(dtype).max);
    } else if (!std::isfinite(d)) {
      fits = false;
    } else if (dtype == DType::Int64) {
      fits = d >= -9223372036854775808.0 && d < 9223372036854775808.0;
    } else {
      const Range r = range_of(dtype);
      fits = std::trunc(d) >= r.lowest && std::trunc(d) <= r.max;
    }
  }
  if (!fits) {
    std::ostringstream os;
    os << op_prefix(op) << "value " << value << " cannot be converted to " << dtype_name(dtype)
       << " without overflow";
    throw ValueError(os.str());
  }
}

}  // namespace locus::ops
