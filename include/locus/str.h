#pragma once
/// \file str.h
/// str(...): LibTorch's torch::str (c10::str), a string of anything `<<` prints.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <sstream>
#include <string>

namespace locus {

/// The arguments printed one after the other: `str("sample-", 3, ".pt")` is "sample-3.pt".
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace locus

LOCUS_API_END
