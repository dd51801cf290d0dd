#pragma once
/// \file optim.h
/// Optimizers (torch.optim): SGD, Adam, AdamW. State lives on each parameter's device and
/// follows it when the model moves.

#include <map>
#include <string>
#include <vector>

#include "locus/tensor.h"

namespace locus::optim {

/// Updates a fixed list of parameters from their gradients. Parameters without a gradient are
/// skipped. step() runs without recording a graph.
class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  /// One update of every parameter that has a gradient.
  virtual void step() = 0;
  /// Clears (default) or zeroes every parameter's gradient.
  void zero_grad(bool set_to_none = true);
  /// Moves the state to `device` now (it also follows the parameters lazily at step()).
  Optimizer& to(Device device);
  const std::vector<Tensor>& params() const noexcept { return params_; }
  /// The state by "<param index>.<name>" ("0.momentum_buffer", "3.exp_avg", "step"), detached.
  std::map<std::string, Tensor> state_dict() const;
  /// Restores state saved by state_dict(), placing each tensor on its parameter's device.
  void load_state_dict(const std::map<std::string, Tensor>& state);

 protected:
  /// The named state tensor of parameter i, created as zeros like the parameter on first use
  /// and moved to the parameter's device (and dtype) if the parameter has moved.
  Tensor& state(size_t i, const std::string& name);
  bool has_state(size_t i, const std::string& name) const;
  std::vector<Tensor> params_;
  int64_t steps_ = 0;

 private:
  std::vector<std::map<std::string, Tensor>> state_;
};

/// Options of SGD (PyTorch's defaults).
struct SGDOptions {
  double lr = 0.01;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

/// Stochastic gradient descent with momentum, Nesterov momentum and L2 weight decay, as
/// torch.optim.SGD. ValueError for a negative rate or nesterov without momentum.
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options = {});
  void step() override;
  const SGDOptions& options() const noexcept { return o_; }

 private:
  SGDOptions o_;
};

/// Options of Adam and AdamW.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  ///< Adam: added to the gradient; AdamW: decoupled (default 0.01)
};

/// Adam (Kingma and Ba), as torch.optim.Adam.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = {});
  void step() override;

 protected:
  void adam_step(bool decoupled_weight_decay);
  AdamOptions o_;
};

/// AdamW (decoupled weight decay, Loshchilov and Hutter), as torch.optim.AdamW.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions options = with_default_decay());
  void step() override;
  /// AdamOptions with PyTorch's AdamW default weight_decay of 0.01.
  static AdamOptions with_default_decay() {
    AdamOptions o;
    o.weight_decay = 0.01;
    return o;
  }
};

}  // namespace locus::optim
