#pragma once
/// \file optim.h
/// Optimizers (torch.optim): SGD, Adam, AdamW. State lives on each parameter's device and
/// follows it when the model moves.

#include <map>
#include <utility>
#include <string>
#include <vector>

#include "locus/arg.h"
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
  /// Whether float16 and bfloat16 parameters are updated through float32 master copies.
  bool master_weights() const noexcept { return master_weights_; }

 protected:
  /// The named state tensor of parameter i, created as zeros like the parameter on first use
  /// and moved to the parameter's device (and dtype) if the parameter has moved. With master
  /// weights, the state of a float16/bfloat16 parameter is float32.
  Tensor& state(size_t i, const std::string& name);
  bool has_state(size_t i, const std::string& name) const;
  /// What step() updates for parameter i: the parameter, or its float32 master copy (state
  /// "master_weight", made from the parameter on first use) when master weights are kept.
  Tensor updated(size_t i);
  /// Parameter i's gradient in updated(i)'s dtype; undefined when it has none.
  Tensor gradient(size_t i);
  /// After an update of updated(i): the master copy rounded into the parameter.
  void write_back(size_t i);
  /// Set by an optimizer whose options ask for master weights.
  void keep_master_weights(bool keep) noexcept { master_weights_ = keep; }
  std::vector<Tensor> params_;
  int64_t steps_ = 0;

 private:
  bool uses_master(size_t i) const noexcept;
  std::vector<std::map<std::string, Tensor>> state_;
  bool master_weights_ = false;
};

/// Options of SGD (PyTorch's defaults), set by name in any order:
/// `SGDOptions(0.1).momentum(0.9).nesterov(true)`.
struct SGDOptions {
  /// The learning rate, positionally.
  SGDOptions(double lr = 0.01) : lr_(lr) {}
  /// The learning rate.
  LOCUS_ARG(double, lr);
  /// The momentum factor (0: plain SGD).
  LOCUS_ARG(double, momentum) = 0;
  /// Dampening of the momentum.
  LOCUS_ARG(double, dampening) = 0;
  /// L2 penalty added to the gradient.
  LOCUS_ARG(double, weight_decay) = 0;
  /// Nesterov momentum (needs momentum > 0 and no dampening).
  LOCUS_ARG(bool, nesterov) = false;
  /// Keep float32 master copies of float16/bfloat16 parameters and update those (small updates
  /// are not rounded away); the parameters get the rounded result after each step.
  LOCUS_ARG(bool, master_weights) = false;
};

/// Stochastic gradient descent with momentum, Nesterov momentum and L2 weight decay, as
/// torch.optim.SGD. ValueError for a negative rate or nesterov without momentum.
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options = {});
  /// SGD with this learning rate and the other options' defaults: `optim::SGD(params, 0.1)`.
  SGD(std::vector<Tensor> params, double lr) : SGD(std::move(params), SGDOptions(lr)) {}
  void step() override;
  const SGDOptions& options() const noexcept { return o_; }

 private:
  SGDOptions o_;
};

/// Options of Adam and AdamW, set by name in any order: `AdamOptions(1e-3).betas(0.9, 0.98)`.
struct AdamOptions {
  /// The learning rate, positionally.
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  /// The learning rate.
  LOCUS_ARG(double, lr);
  /// Decay of the running mean of gradients.
  LOCUS_ARG(double, beta1) = 0.9;
  /// Decay of the running mean of squared gradients.
  LOCUS_ARG(double, beta2) = 0.999;
  /// Added to the denominator for stability.
  LOCUS_ARG(double, eps) = 1e-8;
  /// Adam: an L2 penalty added to the gradient; AdamW: decoupled decay (default 0.01 there).
  LOCUS_ARG(double, weight_decay) = 0;
  /// Keep float32 master copies of float16/bfloat16 parameters (as SGDOptions::master_weights).
  LOCUS_ARG(bool, master_weights) = false;

 public:
  /// Both betas at once, as PyTorch's `betas=(0.9, 0.999)`.
  AdamOptions& betas(double beta1, double beta2) {
    beta1_ = beta1, beta2_ = beta2;
    return *this;
  }
};

/// Adam (Kingma and Ba), as torch.optim.Adam.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options = {});
  /// Adam with this learning rate and the other options' defaults.
  Adam(std::vector<Tensor> params, double lr) : Adam(std::move(params), AdamOptions(lr)) {}
  void step() override;
  const AdamOptions& options() const noexcept { return o_; }

 protected:
  void adam_step(bool decoupled_weight_decay);
  AdamOptions o_;
};

/// AdamW (decoupled weight decay, Loshchilov and Hutter), as torch.optim.AdamW.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions options = with_default_decay());
  /// AdamW with this learning rate and PyTorch's AdamW defaults otherwise (weight_decay 0.01).
  AdamW(std::vector<Tensor> params, double lr) : AdamW(std::move(params), with_default_decay().lr(lr)) {}
  void step() override;
  /// AdamOptions with PyTorch's AdamW default weight_decay of 0.01.
  static AdamOptions with_default_decay() { return AdamOptions().weight_decay(0.01); }
};

}  // namespace locus::optim
