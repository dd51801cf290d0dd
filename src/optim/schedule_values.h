#pragma once
// What the LR schedulers' files share: pi, a check, and their state's float64 tensors.

#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/tensor.h"

namespace locus::optim::lr_scheduler::detail {

/// Pi, as PyTorch's math.pi.
constexpr double kPi = std::numbers::pi;

/// `value`; ValueError "<what> must be a positive integer, but got <value>" unless it is >= 1.
inline int64_t positive(int64_t value, const char* what) {
  if (value < 1) throw ValueError(std::string(what) + " must be a positive integer, but got " + std::to_string(value));
  return value;
}

/// The float64 tensor of a state_dict() entry.
inline Tensor f64(const std::vector<double>& v) { return tensor(v, TensorOptions().dtype(DType::Float64)); }

/// The numbers of a state_dict() entry.
inline std::vector<double> values_of(const Tensor& t) {
  const Tensor c = t.to(DType::Float64).contiguous();
  std::vector<double> out(static_cast<size_t>(c.numel()));
  for (int64_t k = 0; k < c.numel(); ++k) out[static_cast<size_t>(k)] = c.reshape({-1})[k].item<double>();
  return out;
}

}  // namespace locus::optim::lr_scheduler::detail
