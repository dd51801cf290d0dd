#pragma once
// Python's repr of a float, for error messages worded as PyTorch's ("Invalid learning rate:
// -1.0", "Invalid epsilon value: 1e-08").

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace locus::optim::detail {

/// repr(x) as Python writes it: the shortest round-trip digits, positional for exponents in
/// [-4, 16), scientific otherwise, and ".0" on an integral positional value.
inline std::string py_repr(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific).ptr;
  std::string sci(buf, end);  // "-1.2345e-05": the shortest digits
  const size_t e = sci.find('e');
  const int exp = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (size_t k = 0; k < e; ++k)
    if (sci[k] >= '0' && sci[k] <= '9') digits += sci[k];
  const std::string sign = std::signbit(x) ? "-" : "";
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp < 0)
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    else if (static_cast<int>(digits.size()) <= exp + 1)
      out = digits + std::string(static_cast<size_t>(exp + 1) - digits.size(), '0') + ".0";
    else
      out = digits.substr(0, static_cast<size_t>(exp + 1)) + "." + digits.substr(static_cast<size_t>(exp + 1));
    return sign + out;
  }
  std::string mant = digits.substr(0, 1);
  if (digits.size() > 1) mant.append(".").append(digits, 1);
  const int a = std::abs(exp);
  return sign + mant + "e" + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + std::to_string(a);
}

}  // namespace locus::optim::detail
