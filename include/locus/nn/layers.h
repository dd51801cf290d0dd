#pragma once
/// \file layers.h
/// The layers of torch.nn that the tutorials use.

#include <initializer_list>
#include <memory>
#include <vector>

#include "locus/nn/module.h"

namespace locus::nn {

/// y = x W^T + b, W of shape [out, in], initialised like PyTorch (uniform in +-1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
};

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
class GELU : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};
class Tanh : public Module {
 public:
  Tensor forward(const Tensor& x) override;
};

/// Zeroes each element with probability p in training mode and scales the rest by 1/(1-p);
/// the identity in eval mode. ValueError unless 0 <= p < 1.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;

 private:
  double p_;
};

/// Flattens dims start_dim..end_dim (default: all but the batch dim).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1) : start_(start_dim), end_(end_dim) {}
  Tensor forward(const Tensor& x) override;

 private:
  int64_t start_, end_;
};

/// Runs its modules in order; they are named "0", "1", ... as in PyTorch.
class Sequential : public Module {
 public:
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);
  Tensor forward(const Tensor& x) override;
  /// The i-th module.
  std::shared_ptr<Module> operator[](size_t i) const { return modules_.at(i); }
  size_t size() const noexcept { return modules_.size(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace locus::nn
