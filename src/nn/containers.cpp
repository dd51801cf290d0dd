// ModuleList, ModuleDict and ParameterList.
//
// Note [Container names]
// A container's contents are registered under their position or key, which is what state_dict,
// named_modules and repr print. An insert in the middle of a list, or a pop from a dict, changes
// the names of what follows; rather than patch the registrations, the container forgets them all
// and registers its contents again in order (clear_registrations): containers hold a handful of
// modules and change while a model is built, not while it trains.

#include "locus/nn/containers.h"

#include <sstream>

#include "locus/dtype.h"
#include "src/nn/module_sequence.h"

namespace locus::nn {

namespace detail {

void container_index_error(const char* container, size_t index, size_t size) {
  throw IndexError(std::string(container) + ": index " + std::to_string(index) + " is out of range for " +
                   std::to_string(size) + (size == 1 ? " module" : " modules"));
}

void container_cast_error(const char* container, const std::string& where, const std::type_info& type) {
  throw ValueError(std::string(container) + ": unable to cast module[" + where + "] to " + module_type_name(type) +
                   "; it is another class");
}

}  // namespace detail

// ---- ModuleList ----------------------------------------------------------------------------------

ModuleListImpl::ModuleListImpl(std::initializer_list<AnyModule> modules)
    : ModuleListImpl(std::vector<AnyModule>(modules)) {}

ModuleListImpl::ModuleListImpl(const std::vector<AnyModule>& modules) {
  for (const AnyModule& m : modules) push_back(m);
}

void ModuleListImpl::push_back(const AnyModule& module) {
  detail::append_indexed(modules_, module, "ModuleList",
                         [this](const std::string& name, const std::shared_ptr<Module>& m) { register_module(name, m); });
}

void ModuleListImpl::insert(size_t index, const AnyModule& module) {
  if (index > modules_.size()) detail::container_index_error("ModuleList::insert", index, modules_.size());
  if (!module.ptr()) throw ValueError("ModuleList::insert: the module is empty");
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), module.ptr());
  register_all();  // Note [Container names]
}

void ModuleListImpl::register_all() {
  clear_registrations();
  for (size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
}

const std::shared_ptr<Module>& ModuleListImpl::ptr(size_t index) const {
  if (index >= modules_.size()) detail::container_index_error("ModuleList", index, modules_.size());
  return modules_[index];
}

std::shared_ptr<Module> ModuleListImpl::clone(std::optional<Device> device) const {
  return detail::clone_indexed<ModuleListImpl>(modules_, is_training(), device);
}

// ---- ModuleDict ----------------------------------------------------------------------------------

ModuleDictImpl::ModuleDictImpl(const std::vector<std::pair<std::string, AnyModule>>& modules) {
  for (const auto& [key, m] : modules) insert(key, m);
}

ModuleDictImpl::ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules) { update(modules); }

void ModuleDictImpl::insert(const std::string& key, const AnyModule& module) {
  if (!module.ptr()) throw ValueError("ModuleDict: the module for '" + key + "' is empty");
  if (key.empty() || key.find('.') != std::string::npos)
    throw ValueError("ModuleDict: a module name must be non-empty and without '.', got '" + key + "'");
  if (modules_.contains(key)) {
    modules_.insert_or_assign(key, module.ptr());
    register_all();  // Note [Container names]
  } else {
    register_module(key, module.ptr());
    modules_.insert(key, module.ptr());
  }
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> m = (*this)[key];
  modules_.erase(key);
  register_all();
  return m;
}

void ModuleDictImpl::clear() {
  modules_.clear();
  clear_registrations();
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const auto it = modules_.find(key);
  if (it == modules_.end()) throw IndexError("ModuleDict: no module named '" + key + "'");
  return it->second;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> ModuleDictImpl::items() const {
  return {modules_.begin(), modules_.end()};
}

void ModuleDictImpl::register_all() {
  clear_registrations();
  for (const auto& [key, m] : modules_) register_module(key, m);
}

std::shared_ptr<Module> ModuleDictImpl::clone(std::optional<Device> device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (const auto& [key, m] : modules_) copy->insert(key, AnyModule(m->clone(device)));
  copy->train(is_training());
  return copy;
}

// ---- ParameterList -------------------------------------------------------------------------------

ParameterListImpl::ParameterListImpl(std::initializer_list<Tensor> params)
    : ParameterListImpl(std::vector<Tensor>(params)) {}

ParameterListImpl::ParameterListImpl(const std::vector<Tensor>& params) { extend(params); }

void ParameterListImpl::append(Tensor param) {
  if (!param.defined()) throw ValueError("ParameterList: parameter " + std::to_string(params_.size()) + " is undefined");
  params_.push_back(register_parameter(std::to_string(params_.size()), std::move(param)));
}

const Tensor& ParameterListImpl::at(size_t index) const {
  if (index >= params_.size())
    throw IndexError("ParameterList: index " + std::to_string(index) + " is out of range for " +
                     std::to_string(params_.size()) + " parameters");
  return params_[index];
}

std::string ParameterListImpl::extra_repr() const {
  // PyTorch 1.13's ParameterList.extra_repr, line for line.
  std::ostringstream os;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    if (i) os << "\n";
    os << "  (" << i << "): Parameter containing: [torch." << dtype_name(p.dtype()) << " of size ";
    for (int64_t d = 0; d < p.dim(); ++d) os << (d ? "x" : "") << p.size(d);
    if (p.device().type() == DeviceType::CUDA) os << " (GPU " << p.device().index() << ")";
    os << "]";
  }
  return os.str();
}

}  // namespace locus::nn
