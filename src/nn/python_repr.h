#pragma once
// Numbers in modules' printed forms as PyTorch's repr writes them (Module::extra_repr()).

#include <string>

namespace locus::nn::detail {

/// A double as Python's repr writes it: 0.5, 0.1, 1e-05, 1.0 (the shortest form that reads
/// back as the same double).
std::string python_float(double v);

}  // namespace locus::nn::detail
