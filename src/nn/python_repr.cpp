#include "src/nn/python_repr.h"

#include <cstdio>
#include <cstdlib>

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

}  // namespace locus::nn::detail
