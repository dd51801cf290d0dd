#pragma once
// Numbers and sizes as PyTorch writes them: in modules' printed forms (Module::extra_repr())
// and in the layers' error messages.

#include <string>

#include "locus/shape.h"

namespace locus::nn::detail {

/// A double as Python's repr writes it: 0.5, 0.1, 1e-05, 1.0 (the shortest form that reads
/// back as the same double).
std::string python_float(double v);

/// Sizes as PyTorch's messages list them: "[2, 3, 4]".
std::string shape_text(const Shape& shape);

}  // namespace locus::nn::detail
