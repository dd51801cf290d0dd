// Tensors built from the golden files, and results compared with them.

#pragma once

#include <string>

#include "tests/golden/golden_file.h"

namespace locus::golden {

/// d on `dev`, as the strided view d.view names (README.md): the op sees those strides.
Tensor device_tensor(const TensorData& d, Device dev);

/// A double as the failure messages print it (round-trip precision).
std::string fmt(double v);

/// d in a few words: dtype, shape and the first values.
std::string describe(const TensorData& d);

/// Empty when `got` matches `expected` within the dtype's tolerance (wider when the op
/// `accumulates`; -0.0 against 0.0 counts when `signed_zeros`), else the first difference.
std::string compare(const TensorData& expected, const Tensor& got, bool accumulates, bool signed_zeros);

}  // namespace locus::golden
