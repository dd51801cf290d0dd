#include "src/core/shape_check.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "locus/errors.h"
#include "src/core/public_op.h"

namespace locus::detail {

int64_t checked_numel(const Shape& shape, size_t itemsize, std::string_view op) {
  int64_t numel = 1;
  auto extent = static_cast<int64_t>(std::max<size_t>(itemsize, 1));
  bool overflow = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    if (s < 0) {
      std::ostringstream os;
      os << detail::error_prefix(op) << "negative dimension " << s << " at index " << i << " in shape " << shape;
      throw ShapeError(os.str());
    }
    overflow = overflow || __builtin_mul_overflow(extent, std::max<int64_t>(s, 1), &extent);
    if (!overflow) numel *= s;  // numel <= extent, so it cannot wrap while extent does not
  }
  if (overflow) {
    std::ostringstream os;
    os << detail::error_prefix(op) << "shape " << shape << " is too large: its element count or its size in bytes ("
       << itemsize << " per element) overflows int64";
    throw ShapeError(os.str());
  }
  return numel;
}

}  // namespace locus::detail
