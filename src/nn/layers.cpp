// The layers.

#include "locus/nn/layers.h"

#include <cmath>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"

namespace locus::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias) {
  if (in_features <= 0 || out_features <= 0)
    throw ValueError("Linear: in_features and out_features must be positive, got " + std::to_string(in_features) +
                     " and " + std::to_string(out_features));
  // PyTorch's default: kaiming_uniform(a=sqrt(5)) for W and the same bound for b, 1/sqrt(in).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight", sub(mul(rand({out_features, in_features}), 2 * bound), bound));
  if (has_bias) bias = register_parameter("bias", sub(mul(rand({out_features}), 2 * bound), bound));
}

Tensor Linear::forward(const Tensor& x) {
  Tensor y = matmul(x, weight.t());
  return bias.defined() ? add(y, bias) : y;
}

Tensor ReLU::forward(const Tensor& x) { return relu(x); }
Tensor GELU::forward(const Tensor& x) { return gelu(x); }
Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }
Tensor Tanh::forward(const Tensor& x) { return tanh(x); }

Dropout::Dropout(double p) : p_(p) {
  if (!(p >= 0 && p < 1)) throw ValueError("Dropout: p must be in [0, 1), got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x) {
  if (!is_training() || p_ == 0) return x;
  const Tensor keep = ge(rand(x.shape(), TensorOptions().dtype(x.dtype()).device(x.device())), p_).to(x.dtype());
  return mul(x, mul(keep, 1.0 / (1.0 - p_)));
}

Tensor Flatten::forward(const Tensor& x) { return x.flatten(start_, end_); }

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules)
    : Sequential(std::vector<std::shared_ptr<Module>>(modules)) {}

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) : modules_(modules) {
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (!modules_[i]) throw ValueError("Sequential: module " + std::to_string(i) + " is null");
    register_module(std::to_string(i), modules_[i]);
  }
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& m : modules_) y = m->forward(y);
  return y;
}

}  // namespace locus::nn
