#pragma once
// The JSON header of a safetensors file, read strictly and written canonically
// (safetensors_header.cpp). The layout rules (offsets, sizes) are checked by the loader.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "locus/dtype.h"
#include "locus/shape.h"

namespace locus::serialize {

/// One tensor's entry: {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}.
struct TensorEntry {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  uint64_t begin = 0, end = 0;  ///< byte offsets into the data section
};

/// A parsed header: the tensors in file order and the string-to-string `__metadata__`.
struct Header {
  std::vector<TensorEntry> tensors;
  std::map<std::string, std::string> metadata;
};

/// Parses `text` as exactly one JSON object (trailing spaces allowed, as writers pad with them):
/// valid escapes and UTF-8 escapes, no control characters in strings, no duplicate names or keys,
/// non-negative integers that fit int64, every tensor with a known dtype, a shape and two offsets.
/// IOError "cannot load '<path>': <problem>" otherwise.
Header parse_header(const std::string& text, const std::string& path);

/// The safetensors dtype name of `dtype` ("F32", "BF16", ...).
const char* safetensors_dtype(DType dtype) noexcept;
/// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string& text);

/// IOError "cannot load '<path>': <problem>".
[[noreturn]] void fail(const std::string& path, const std::string& problem);

}  // namespace locus::serialize
