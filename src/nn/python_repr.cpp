#include "src/nn/python_repr.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace locus::nn::detail {

std::string python_float(double v) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string shape_text(const Shape& shape) {
  std::ostringstream os;
  os << shape;
  return os.str();
}

}  // namespace locus::nn::detail
