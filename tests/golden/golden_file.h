// The golden files of tests/golden (format in README.md): their cases, parsed.

#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "locus/locus.h"

namespace locus::golden {

/// One tensor of a case: dtype, shape, the strided view the op sees, and its values.
struct TensorData {
  std::string name;
  DType dtype = kFloat32;
  Shape shape;
  std::string view;  // "", "t", "step2" or "expand"
  bool rg = false;
  std::vector<double> f;   // floating dtypes
  std::vector<int64_t> i;  // integer and bool dtypes
  int64_t numel() const { return static_cast<int64_t>(is_floating_point(dtype) ? f.size() : i.size()); }
};

/// One recorded call: the op, its arguments and tensors, and what PyTorch returned or raised.
struct Case {
  int line = 0;
  std::string id, op;
  std::map<std::string, std::string> args;
  std::vector<TensorData> ins;
  std::optional<TensorData> gout;
  std::vector<TensorData> outs, grads;
  bool err = false;
  std::string err_type, err_msg;
};

/// The dtype a file names ("float32", "int64", ...).
DType parse_dtype(const std::string& s);

/// A shape or int list as the files write it: "2,3" or "[2,3]"; "" and "[]" are empty.
Shape parse_list(const std::string& s);

/// The families, one file each, in the order the tests run them.
const std::vector<std::string>& family_names();

/// The parsed cases of one family, read once per process.
const std::vector<Case>& family(const std::string& name);

}  // namespace locus::golden
