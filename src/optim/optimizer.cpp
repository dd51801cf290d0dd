// The optimizer base: parameter groups and their options, the flat list of their parameters,
// and the per-parameter state that follows the parameters.

#include "locus/optim/optimizer.h"

#include <set>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/core/float_mode.h"
#include "src/optim/param_update.h"

namespace locus::optim {

namespace {

const locus::detail::TensorImpl* identity(const Tensor& t) { return t.impl_ptr().get(); }

}  // namespace

OptimizerOptions& OptimizerParamGroup::options() {
  if (!options_) throw ValueError("OptimizerParamGroup: the group has no options");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  if (!options_) throw ValueError("OptimizerParamGroup: the group has no options");
  return *options_;
}

void detail::throw_unknown_option(const std::string& name) {
  throw ValueError("optimizer options: unknown option '" + name + "'");
}

Optimizer::Optimizer(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> defaults)
    : Optimizer(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  size_t count = 0;
  for (const OptimizerParamGroup& g : param_groups) count += g.params().size();
  // An empty list is almost always a module whose layers were never registered: say so now,
  // not after an epoch that changed nothing (PyTorch raises too).
  if (count == 0)
    throw ValueError(
        "optimizer got an empty parameter list: is every layer of the model registered as a submodule "
        "(register_module) so that parameters() finds it?");
  for (const OptimizerParamGroup& g : param_groups) add_param_group(g);
}

void Optimizer::check_param(const Tensor& p, size_t index) const {
  if (!p.defined()) throw ValueError("optimizer: parameter " + std::to_string(index) + " is undefined");
  if (!p.is_floating_point())
    throw DTypeError("optimizer: parameter " + std::to_string(index) + " is " + std::string(dtype_name(p.dtype())) +
                     "; only floating tensors can be optimized");
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  sync_groups();
  OptimizerParamGroup group(param_group.params(),
                            param_group.has_options() ? param_group.options().clone() : defaults_->clone());
  std::set<const locus::detail::TensorImpl*> taken;
  for (const Tensor& p : params_) taken.insert(identity(p));
  for (size_t k = 0; k < group.params().size(); ++k) {
    check_param(group.params()[k], params_.size() + k);
    if (taken.count(identity(group.params()[k])))
      throw ValueError("some parameters appear in more than one parameter group");
  }
  for (const Tensor& p : group.params()) {
    params_.push_back(p);
    state_.emplace_back();
    param_steps_.push_back(0);
    scalars_.emplace_back();
    master_.push_back(group.options().uses_master_weights());
  }
  groups_.push_back(std::move(group));
}

// Note [Group membership]: state is kept by flat index (a parameter's position in the groups,
// the "<index>." of state_dict()). LibTorch lets a caller change `param_groups()[g].params()`
// in place; when the groups no longer list params_, the flat list is rebuilt and each
// parameter's state follows it (a parameter no longer listed loses its state, a new one starts
// fresh), so a changed membership never misattributes state.
void Optimizer::sync_groups() const {
  size_t k = 0;
  bool same = true;
  for (const OptimizerParamGroup& g : groups_)
    for (const Tensor& p : g.params()) same = same && k < params_.size() && identity(params_[k++]) == identity(p);
  if (same && k == params_.size()) return;
  std::map<const locus::detail::TensorImpl*, size_t> old;
  for (size_t i = 0; i < params_.size(); ++i) old.emplace(identity(params_[i]), i);
  std::vector<Tensor> params;
  std::vector<std::map<std::string, Tensor>> state;
  std::vector<int64_t> steps;
  std::vector<std::map<std::string, double>> scalars;
  std::vector<bool> master;
  for (const OptimizerParamGroup& g : groups_)
    for (const Tensor& p : g.params()) {
      check_param(p, params.size());
      auto it = old.find(identity(p));
      params.push_back(p);
      state.push_back(it == old.end() ? std::map<std::string, Tensor>() : state_[it->second]);
      steps.push_back(it == old.end() ? 0 : param_steps_[it->second]);
      scalars.push_back(it == old.end() ? std::map<std::string, double>() : scalars_[it->second]);
      master.push_back(g.options().uses_master_weights());
    }
  params_ = std::move(params), state_ = std::move(state), param_steps_ = std::move(steps), master_ = std::move(master);
  scalars_ = std::move(scalars);
}

const std::vector<Tensor>& Optimizer::params() const {
  sync_groups();
  return params_;
}

bool Optimizer::master_weights() const { return defaults_->uses_master_weights(); }

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (const OptimizerParamGroup& g : groups_)
    for (const Tensor& p : g.params()) {
      if (!p.grad().defined()) continue;
      if (set_to_none)
        p.set_grad(Tensor());
      else
        p.grad().zero_();
    }
}

bool Optimizer::has_state(size_t i, const std::string& name) const { return state_.at(i).count(name) != 0; }

int64_t& Optimizer::param_step(size_t i) { return param_steps_.at(i); }

// Note [Scalar state]: PyTorch keeps some per-parameter state as 0-dim tensors ("step",
// NAdam's "mu_product"). Here they are numbers beside the tensor state, saved as "<i>.<name>"
// 0-dim tensors; load_state_dict() knows them by name (kScalarState), since a 0-dim parameter's
// tensor state is 0-dim too.
namespace {
const std::set<std::string> kScalarState = {"mu_product"};

// The number before the first '.' of `text` (`key` or its tail); ValueError when it has none.
size_t leading_index(const std::string& text, const std::string& key, const char* form) {
  try {
    return std::stoul(text.substr(0, text.find('.')));
  } catch (...) {
    throw ValueError("optimizer load_state_dict: key '" + key + "' is not '" + form + "'");
  }
}
}  // namespace

double& Optimizer::param_scalar(size_t i, const std::string& name, double initial) {
  return scalars_.at(i).try_emplace(name, initial).first->second;
}

bool Optimizer::uses_master(size_t i) const {
  const DType d = params_[i].dtype();
  return master_[i] && (d == DType::Float16 || d == DType::BFloat16);
}

Tensor& Optimizer::state(size_t i, const std::string& name) {
  const Tensor& p = params_[i];
  const DType dtype = uses_master(i) ? DType::Float32 : p.dtype();
  Tensor& s = state_.at(i)[name];
  if (!s.defined())
    s = zeros(p.shape(), TensorOptions().dtype(dtype).device(p.device()));
  else if (s.device() != p.device() || s.dtype() != dtype)
    s = s.to(p.device(), dtype);
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

void Optimizer::update_each(const std::function<void(const OptimizerOptions&, detail::ParamUpdate&)>& update) {
  NoGradGuard no_grad;
  const locus::detail::FlushDenormalsGuard flush_denormals;  // Note [Denormals]
  sync_groups();
  ++steps_;
  size_t first = 0;
  for (OptimizerParamGroup& group : groups_) {
    const size_t last = first + group.params().size();
    detail::FusedBatches batches;
    for (size_t i = first; i < last; ++i) {
      detail::ParamUpdate p{i, Tensor(), gradient(i), &batches};
      if (!p.grad.defined()) continue;
      p.param = updated(i);
      update(group.options(), p);
      if (!p.fused) write_back(i);
    }
    for (size_t i : batches.run()) write_back(i);
    first = last;
  }
}

Optimizer& Optimizer::to(Device device) {
  NoGradGuard no_grad;
  for (auto& m : state_)
    for (auto& [name, t] : m) t = t.to(device);
  return *this;
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  sync_groups();
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < state_.size(); ++i) {
    for (const auto& [name, t] : state_[i]) out[std::to_string(i) + "." + name] = t.detach();
    // Numbers beside the state live where the state does, so that every entry but "step" is on
    // its parameter's device (a group's entries on its first parameter's).
    const TensorOptions here = TensorOptions().device(params_[i].device());
    if (param_steps_[i] != 0) out[std::to_string(i) + ".step"] = tensor(param_steps_[i], here.dtype(DType::Int64));
    for (const auto& [name, v] : scalars_[i])
      out[std::to_string(i) + "." + name] = tensor(v, here.dtype(DType::Float64));
  }
  out["step"] = tensor(steps_);
  size_t first = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string prefix = "param_groups." + std::to_string(g) + ".";
    const Device where = groups_[g].params().empty() ? Device("cpu") : groups_[g].params().front().device();
    const TensorOptions f64 = TensorOptions().dtype(DType::Float64).device(where);
    for (const auto& [name, v] : groups_[g].options().values())
      out[prefix + name] = tensor(v, f64);
    for (const auto& [name, v] : groups_[g].scheduler_values())
      out[prefix + "scheduler." + name] = tensor(v, f64);
    std::vector<int64_t> members;
    for (size_t k = 0; k < groups_[g].params().size(); ++k) members.push_back(static_cast<int64_t>(first + k));
    first += groups_[g].params().size();
    out[prefix + "params"] = tensor(members, TensorOptions().dtype(DType::Int64).device(where));
  }
  return out;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  NoGradGuard no_grad;
  sync_groups();
  std::vector<std::map<std::string, Tensor>> loaded(params_.size());
  std::vector<int64_t> steps_of(params_.size(), -1);
  std::vector<std::map<std::string, double>> scalars(params_.size());
  std::map<size_t, std::map<std::string, double>> options, scheduler_values;
  std::map<size_t, int64_t> sizes;
  int64_t steps = 0;
  for (const auto& [key, t] : state) {
    if (key == "step") {
      steps = t.item<int64_t>();
      continue;
    }
    if (key.rfind("param_groups.", 0) == 0) {
      const std::string rest = key.substr(13);
      const size_t dot = rest.find('.');
      const size_t g = leading_index(rest, key, "param_groups.<group>.<option>");
      if (dot == std::string::npos) throw ValueError("optimizer load_state_dict: key '" + key + "' names no option");
      const std::string name = rest.substr(dot + 1);
      if (name == "params")
        sizes[g] = t.numel();
      else if (name.rfind("scheduler.", 0) == 0)
        scheduler_values[g][name.substr(10)] = t.item<double>();
      else
        options[g][name] = t.item<double>();
      continue;
    }
    const size_t dot = key.find('.');
    const size_t i = leading_index(key, key, "<param index>.<name>");
    if (dot == std::string::npos || i >= params_.size())
      throw ValueError("optimizer load_state_dict: key '" + key + "' names no parameter of this optimizer");
    const std::string name = key.substr(dot + 1);
    if (name == "step") {
      steps_of[i] = t.item<int64_t>();
      continue;
    }
    if (kScalarState.count(name)) {
      if (t.numel() != 1) throw ShapeError("optimizer load_state_dict: '" + key + "' is not a number");
      scalars[i][name] = t.item<double>();
      continue;
    }
    if (!(t.shape() == params_[i].shape()))
      throw ShapeError("optimizer load_state_dict: '" + key + "' has the wrong shape");
    loaded[i][name] = t.to(params_[i].device(), uses_master(i) ? DType::Float32 : params_[i].dtype(), false, true);
  }
  // As PyTorch's checks: the saved groups must match these groups one to one.
  if (!sizes.empty()) {
    if (sizes.size() != groups_.size() || sizes.rbegin()->first != groups_.size() - 1)
      throw ValueError("loaded state dict has a different number of parameter groups");
    for (const auto& [g, n] : sizes)
      if (static_cast<size_t>(n) != groups_[g].params().size())
        throw ValueError(
            "loaded state dict contains a parameter group that doesn't match the size of optimizer's group");
  }
  for (const auto& [g, values] : scheduler_values)
    if (g >= groups_.size()) throw ValueError("loaded state dict has a different number of parameter groups");
  for (const auto& [g, values] : options)
    if (g >= groups_.size()) throw ValueError("loaded state dict has a different number of parameter groups");
  std::map<size_t, std::unique_ptr<OptimizerOptions>> restored;
  for (const auto& [g, values] : options) {
    restored[g] = groups_[g].options().clone();
    restored[g]->set_values(values);
  }
  // Validated everything: now change this optimizer.
  for (auto& [g, o] : restored) groups_[g].set_options(std::move(o));
  for (auto& [g, values] : scheduler_values) groups_[g].scheduler_values() = values;
  for (size_t i = 0; i < params_.size(); ++i) {
    // A dictionary from before per-parameter steps: every parameter with state took every step.
    param_steps_[i] = steps_of[i] >= 0 ? steps_of[i] : (loaded[i].empty() ? 0 : steps);
  }
  size_t first = 0;
  for (const OptimizerParamGroup& g : groups_)
    for (size_t k = 0; k < g.params().size(); ++k) master_[first++] = g.options().uses_master_weights();
  state_ = std::move(loaded);
  scalars_ = std::move(scalars);
  steps_ = steps;
}

}  // namespace locus::optim
