// nn::Module: registration, traversal, moving in place, state dicts.

#include "locus/nn/module.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"

namespace locus::nn {

std::string module_type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : type.name();
  // Keep the class's own name: "locus::nn::LinearImpl" and "(anonymous namespace)::NetImpl"
  // print as "Linear" and "Net", as PyTorch prints type(module).__name__.
  if (const size_t lt = name.find('<'); lt != std::string::npos) name.erase(lt);
  if (const size_t colon = name.rfind("::"); colon != std::string::npos) name.erase(0, colon + 2);
  if (name.size() > 4 && name.ends_with("Impl")) name.erase(name.size() - 4);
  return name;
}

Tensor Module::forward(const Tensor&) {
  throw NotImplementedError("Module [" + name() + "] is missing the required \"forward\" function (or takes other arguments than one tensor)");
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  if (!module) throw ValueError("register_module: '" + name + "' is an empty module");
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError("register_module: a submodule name must be non-empty and without '.', got '" + name + "'");
  for (const auto& [existing, child] : children_)
    if (existing == name) throw ValueError("register_module: '" + name + "' is already registered");
  children_.emplace_back(name, std::move(module));
}

namespace {

// Indents every line but the first (PyTorch's _addindent), so nested modules line up.
std::string indent_following_lines(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

std::string Module::repr() const {
  std::vector<std::string> lines;
  const std::string extra = extra_repr();
  size_t extra_lines = 0;
  if (!extra.empty()) {
    std::istringstream in(extra);
    for (std::string line; std::getline(in, line);) lines.push_back(line), ++extra_lines;
  }
  for (const auto& [child_name, child] : children_)
    lines.push_back("(" + child_name + "): " + indent_following_lines(child->repr()));
  std::string out = name() + "(";
  if (extra_lines == 1 && children_.empty()) out += lines[0];
  else if (!lines.empty()) {
    out += "\n";
    for (const std::string& line : lines) out += "  " + line + "\n";
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.repr(); }

void Module::clear_registrations() noexcept {
  parameters_.clear();
  buffers_.clear();
  children_.clear();
}

void Module::copy_state_from(const Module& source, std::optional<Device> device) {
  NoGradGuard no_grad;
  for (const bool params : {true, false}) {
    const std::vector<NamedTensor> from = params ? source.named_parameters() : source.named_buffers();
    const std::vector<NamedTensor> to = params ? named_parameters() : named_buffers();
    bool same = from.size() == to.size();
    for (size_t i = 0; same && i < from.size(); ++i) same = from[i].first == to[i].first;
    if (!same)
      throw ValueError("clone: " + name() + "'s reset() registers other " + (params ? "parameters" : "buffers") +
                       " than the module has; reset() must build the same structure every time");
    for (size_t i = 0; i < from.size(); ++i) {
      Tensor dst = to[i].second;
      dst.set_data(from[i].second.detach().to(device.value_or(from[i].second.device()), false, /*copy=*/true));
    }
  }
}

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

void Module::move(std::optional<Device> device, std::optional<DType> dtype, bool non_blocking) {
  NoGradGuard no_grad;
  auto moved = [&](const Tensor& t) {
    const DType to_dtype = dtype && t.is_floating_point() ? *dtype : t.dtype();
    return t.to(device.value_or(t.device()), to_dtype, non_blocking);
  };
  for (auto& [name, t] : named_parameters()) {
    t.set_data(moved(t));
    if (const Tensor g = t.grad(); g.defined()) t.set_grad(moved(g));
  }
  for (auto& [name, t] : named_buffers()) t.set_data(moved(t));
}

Module& Module::to(Device device, bool non_blocking) {
  move(device, std::nullopt, non_blocking);
  return *this;
}
Module& Module::to(DType dtype, bool non_blocking) {
  move(std::nullopt, dtype, non_blocking);
  return *this;
}
Module& Module::to(Device device, DType dtype, bool non_blocking) {
  move(device, dtype, non_blocking);
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
