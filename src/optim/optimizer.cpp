// The optimizer base: parameter list, gradients, state that follows the parameters; and the
// three optimizers, which update every parameter with one fused kernel per device and dtype
// where the device has it (src/optim/fused_update.h), else with composed ops.

#include "locus/optim.h"

#include <cmath>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/optim/fused_update.h"

namespace locus::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)), state_(params_.size()) {
  // An empty list is almost always a module whose layers were never registered: say so now,
  // not after an epoch that changed nothing (PyTorch raises too).
  if (params_.empty())
    throw ValueError("optimizer got an empty parameter list: is every layer of the model registered as a submodule "
                     "(register_module) so that parameters() finds it?");
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].defined()) throw ValueError("optimizer: parameter " + std::to_string(i) + " is undefined");
    if (!params_[i].is_floating_point())
      throw DTypeError("optimizer: parameter " + std::to_string(i) + " is " + std::string(dtype_name(params_[i].dtype())) +
                       "; only floating tensors can be optimized");
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (const Tensor& p : params_) {
    if (!p.grad().defined()) continue;
    if (set_to_none) p.set_grad(Tensor());
    else p.grad().zero_();
  }
}

bool Optimizer::has_state(size_t i, const std::string& name) const { return state_.at(i).count(name) != 0; }

bool Optimizer::uses_master(size_t i) const noexcept {
  const DType d = params_[i].dtype();
  return master_weights_ && (d == DType::Float16 || d == DType::BFloat16);
}

Tensor& Optimizer::state(size_t i, const std::string& name) {
  const Tensor& p = params_[i];
  const DType dtype = uses_master(i) ? DType::Float32 : p.dtype();
  Tensor& s = state_.at(i)[name];
  if (!s.defined()) s = zeros(p.shape(), TensorOptions().dtype(dtype).device(p.device()));
  else if (s.device() != p.device() || s.dtype() != dtype) s = s.to(p.device(), dtype);
  return s;
}

Tensor Optimizer::updated(size_t i) {
  if (!uses_master(i)) return params_[i];
  const bool first = !has_state(i, "master_weight");
  Tensor& master = state(i, "master_weight");
  if (first) master.copy_(params_[i].detach());
  return master;
}

Tensor Optimizer::gradient(size_t i) {
  const Tensor g = params_[i].grad();
  return g.defined() && uses_master(i) ? g.to(DType::Float32) : g;
}

void Optimizer::write_back(size_t i) {
  if (uses_master(i)) params_[i].copy_(state_.at(i).at("master_weight"));
}

Optimizer& Optimizer::to(Device device) {
  NoGradGuard no_grad;
  for (auto& m : state_)
    for (auto& [name, t] : m) t = t.to(device);
  return *this;
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < state_.size(); ++i)
    for (const auto& [name, t] : state_[i]) out[std::to_string(i) + "." + name] = t.detach();
  out["step"] = tensor(steps_);
  return out;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  NoGradGuard no_grad;
  std::vector<std::map<std::string, Tensor>> loaded(params_.size());
  int64_t steps = 0;
  for (const auto& [key, t] : state) {
    if (key == "step") {
      steps = t.item<int64_t>();
      continue;
    }
    const size_t dot = key.find('.');
    size_t i = 0;
    try {
      i = std::stoul(key.substr(0, dot));
    } catch (...) {
      throw ValueError("optimizer load_state_dict: key '" + key + "' is not '<param index>.<name>'");
    }
    if (dot == std::string::npos || i >= params_.size())
      throw ValueError("optimizer load_state_dict: key '" + key + "' names no parameter of this optimizer");
    if (!(t.shape() == params_[i].shape())) throw ShapeError("optimizer load_state_dict: '" + key + "' has the wrong shape");
    loaded[i][key.substr(dot + 1)] = t.to(params_[i].device(), uses_master(i) ? DType::Float32 : params_[i].dtype(), false, true);
  }
  state_ = std::move(loaded);
  steps_ = steps;
}

SGD::SGD(std::vector<Tensor> params, SGDOptions options) : Optimizer(std::move(params)), o_(options) {
  keep_master_weights(o_.master_weights());
  // As PyTorch's checks, written so that NaN fails them too.
  if (!(o_.lr() >= 0)) throw ValueError("SGD: invalid learning rate " + std::to_string(o_.lr()));
  if (!(o_.momentum() >= 0)) throw ValueError("SGD: invalid momentum value " + std::to_string(o_.momentum()));
  if (!(o_.weight_decay() >= 0)) throw ValueError("SGD: invalid weight_decay value " + std::to_string(o_.weight_decay()));
  if (o_.nesterov() && (o_.momentum() <= 0 || o_.dampening() != 0))
    throw ValueError("SGD: nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  ++steps_;
  ops::OptimizerStepArgs hyper;
  hyper.kind = ops::OptimizerKind::Sgd;
  hyper.lr = o_.lr(), hyper.weight_decay = o_.weight_decay();
  hyper.momentum = o_.momentum(), hyper.dampening = o_.dampening(), hyper.nesterov = o_.nesterov();
  detail::FusedUpdate fused(hyper);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = gradient(i);
    if (!g.defined()) continue;
    Tensor p = updated(i);
    const bool with_buffer = o_.momentum() != 0;
    const bool fresh = with_buffer && !has_state(i, "momentum_buffer");
    const Tensor buf = with_buffer ? state(i, "momentum_buffer") : Tensor();
    if (fused.add(i, p, g, buf, Tensor(), fresh)) continue;
    // Composed: the same arithmetic as the fused kernel, op by op.
    if (o_.weight_decay() != 0) g = add(g, p, o_.weight_decay());
    if (with_buffer) {
      Tensor b = buf;
      if (fresh) b.copy_(g);
      else b.mul_(o_.momentum()).add_(g, 1 - o_.dampening());
      g = o_.nesterov() ? add(g, b, o_.momentum()) : b;
    }
    p.add_(g, -o_.lr());
    write_back(i);
  }
  for (size_t i : fused.run()) write_back(i);
}

Adam::Adam(std::vector<Tensor> params, AdamOptions options) : Optimizer(std::move(params)), o_(options) {
  keep_master_weights(o_.master_weights());
  if (!(o_.lr() >= 0)) throw ValueError("Adam: invalid learning rate " + std::to_string(o_.lr()));
  if (!(o_.eps() >= 0)) throw ValueError("Adam: invalid epsilon value " + std::to_string(o_.eps()));
  if (!(o_.beta1() >= 0 && o_.beta1() < 1)) throw ValueError("Adam: invalid beta1 " + std::to_string(o_.beta1()) + " (must be in [0, 1))");
  if (!(o_.beta2() >= 0 && o_.beta2() < 1)) throw ValueError("Adam: invalid beta2 " + std::to_string(o_.beta2()) + " (must be in [0, 1))");
  if (!(o_.weight_decay() >= 0)) throw ValueError("Adam: invalid weight_decay value " + std::to_string(o_.weight_decay()));
}

void Adam::step() { adam_step(false); }

void Adam::adam_step(bool decoupled) {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  ++steps_;
  const double bias1 = 1 - std::pow(o_.beta1(), static_cast<double>(steps_));
  const double bias2 = 1 - std::pow(o_.beta2(), static_cast<double>(steps_));
  ops::OptimizerStepArgs hyper;
  hyper.kind = decoupled ? ops::OptimizerKind::AdamW : ops::OptimizerKind::Adam;
  hyper.lr = o_.lr(), hyper.weight_decay = o_.weight_decay();
  hyper.beta1 = o_.beta1(), hyper.beta2 = o_.beta2(), hyper.eps = o_.eps();
  hyper.bias_correction1 = bias1, hyper.bias_correction2 = bias2;
  detail::FusedUpdate fused(hyper);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = gradient(i);
    if (!g.defined()) continue;
    Tensor p = updated(i);
    Tensor m = state(i, "exp_avg");
    Tensor v = state(i, "exp_avg_sq");
    if (fused.add(i, p, g, m, v, false)) continue;
    // Composed: the same arithmetic as the fused kernel, op by op.
    if (o_.weight_decay() != 0) {
      if (decoupled) p.mul_(1 - o_.lr() * o_.weight_decay());
      else g = add(g, p, o_.weight_decay());
    }
    m.mul_(o_.beta1()).add_(g, 1 - o_.beta1());
    v.mul_(o_.beta2()).add_(mul(g, g), 1 - o_.beta2());
    // p -= lr/bias1 * m / (sqrt(v)/sqrt(bias2) + eps), PyTorch's order of operations.
    const Tensor denom = add(div(sqrt(v), std::sqrt(bias2)), o_.eps());
    p.sub_(div(m, denom), o_.lr() / bias1);
    write_back(i);
  }
  for (size_t i : fused.run()) write_back(i);
}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), options) {}

void AdamW::step() { adam_step(true); }

}  // namespace locus::optim
