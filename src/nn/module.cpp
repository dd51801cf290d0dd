// nn::Module: registration, traversal, moving in place, state dicts.

#include "locus/nn/module.h"

#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"

namespace locus::nn {

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  if (value.is_floating_point() && !value.requires_grad()) value.requires_grad_(true);
  parameters_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  buffers_.emplace_back(name, value);
  return value;
}

void Module::collect(const std::string& prefix, bool params, std::vector<NamedTensor>& out) const {
  for (const auto& [name, t] : params ? parameters_ : buffers_) out.emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", params, out);
}

std::vector<NamedTensor> Module::named_parameters() const {
  std::vector<NamedTensor> out;
  collect("", true, out);
  return out;
}

std::vector<NamedTensor> Module::named_buffers() const {
  std::vector<NamedTensor> out;
  collect("", false, out);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

void Module::move(std::optional<Device> device, std::optional<DType> dtype) {
  NoGradGuard no_grad;
  auto moved = [&](const Tensor& t) {
    const DType to_dtype = dtype && t.is_floating_point() ? *dtype : t.dtype();
    return t.to(device.value_or(t.device()), to_dtype);
  };
  for (auto& [name, t] : named_parameters()) {
    t.set_data(moved(t));
    if (const Tensor g = t.grad(); g.defined()) t.set_grad(moved(g));
  }
  for (auto& [name, t] : named_buffers()) t.set_data(moved(t));
}

Module& Module::to(Device device) {
  move(device, std::nullopt);
  return *this;
}
Module& Module::to(DType dtype) {
  move(std::nullopt, dtype);
  return *this;
}
Module& Module::to(Device device, DType dtype) {
  move(device, dtype);
  return *this;
}

Device Module::device() const {
  std::optional<NamedTensor> first;
  for (const auto& list : {named_parameters(), named_buffers()})
    for (const auto& nt : list) {
      if (!first) first = nt;
      else if (nt.second.device() != first->second.device())
        throw ValueError("Module::device: the module's tensors are on several devices: '" + first->first + "' on " +
                         first->second.device().str() + " and '" + nt.first + "' on " + nt.second.device().str() +
                         "; call .to(device) on the whole module");
    }
  return first ? first->second.device() : Device(DeviceType::CPU);
}

Module& Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) p.set_grad(Tensor());
    else p.grad().zero_();
  }
}

std::map<std::string, Tensor> Module::state_dict() const {
  std::map<std::string, Tensor> out;
  for (const auto& list : {named_parameters(), named_buffers()})
    for (const auto& [name, t] : list) out[name] = t.detach();
  return out;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  NoGradGuard no_grad;
  std::map<std::string, Tensor> mine;
  for (const auto& list : {named_parameters(), named_buffers()})
    for (const auto& [name, t] : list) mine[name] = t;
  if (strict) {
    for (const auto& [name, t] : mine)
      if (!state.count(name)) throw ValueError("load_state_dict: missing key '" + name + "'");
    for (const auto& [name, t] : state)
      if (!mine.count(name)) throw ValueError("load_state_dict: unexpected key '" + name + "'");
  }
  // Check every shape before copying anything, so a bad dict leaves the module unchanged.
  for (const auto& [name, t] : state) {
    auto it = mine.find(name);
    if (it != mine.end() && !(it->second.shape() == t.shape())) {
      std::ostringstream os;
      os << "load_state_dict: '" << name << "' has shape " << t.shape() << " in the dict but " << it->second.shape()
         << " in the module";
      throw ShapeError(os.str());
    }
  }
  for (const auto& [name, t] : state)
    if (auto it = mine.find(name); it != mine.end()) it->second.detach().copy_(t);
}

}  // namespace locus::nn
