// Module::clone for any module class Locus has seen: its submodules cloned first, then the class
// copy-constructed with its members redirected to the clones.
//
// Note [Replicating modules]: PyTorch's replicate() copies a module's __dict__ and puts replica
// parameters and submodules in it; it can, because Python attributes are looked up by name in
// that dict. A C++ module holds its parts as members (`nn::Linear fc1`, `Tensor w`), which the
// class's own copy constructor copies and nothing else can reach. So clone() runs that copy
// constructor while this thread has a replication map active:
//   1. each submodule is cloned first (its own clone(): nn::Cloneable's, Sequential's, or this
//      one again), and the map records original -> clone for it and everything under it,
//      modules and their parameters and buffers alike;
//   2. the module's own parameters and buffers get fresh copies (on the target device);
//   3. the class is copy-constructed (the copier its handle, register_module or AnyModule
//      recorded, since only they know the static type); meanwhile Tensor's, ModuleHolder's and
//      Module's copy constructors look every tensor and submodule up in the map and take the
//      replica's. A member `nn::Linear fc1` or `Tensor w` of the copy is thus the replica's, as
//      are the copy's registered lists, while unregistered members are shared, as Python's
//      replicas share their plain attributes.
// The map is per thread, and a global count of threads that have one lets every other copy of a
// Tensor skip the lookup with one relaxed load (tensor_substitution.h): under callgrind, `add` of
// two 1-element cpu tensors went from 2447 to 2455 instructions (+0.3%). Limits: a member that is
// a raw std::shared_ptr to a submodule cannot be redirected (hold submodules through handles),
// and a class that cannot be copied says so here; a class with a member whose copy does not
// compile although it claims to (std::vector<std::unique_ptr<T>>) must declare its copy
// constructor `= delete` (or derive nn::Cloneable) to be used with a handle.

#include <mutex>
#include <typeindex>
#include <unordered_map>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/nn/module.h"

namespace locus {
namespace detail {
namespace {

std::mutex classes_mutex;
std::unordered_map<std::type_index, ModuleClass>& classes() {
  static std::unordered_map<std::type_index, ModuleClass> map;
  return map;
}

// Original module -> its replica, for the module this thread is copy-constructing.
using ModuleSubstitution = std::unordered_map<const nn::Module*, std::shared_ptr<nn::Module>>;
thread_local const ModuleSubstitution* active_modules = nullptr;

// Makes both maps this thread's for the scope's lifetime.
class ReplicationScope {
 public:
  ReplicationScope(const ModuleSubstitution& modules, const TensorSubstitution& tensors)
      : previous_(active_modules), tensors_(tensors) {
    active_modules = &modules;
  }
  ~ReplicationScope() { active_modules = previous_; }
  ReplicationScope(const ReplicationScope&) = delete;
  ReplicationScope& operator=(const ReplicationScope&) = delete;

 private:
  const ModuleSubstitution* previous_;
  TensorSubstitutionScope tensors_;
};

}  // namespace

void add_module_class(const std::type_info& type, ModuleClass module_class) {
  std::lock_guard<std::mutex> lock(classes_mutex);
  classes().emplace(type, module_class);
}

ModuleClass find_module_class(const std::type_info& type) {
  std::lock_guard<std::mutex> lock(classes_mutex);
  const auto it = classes().find(type);
  return it == classes().end() ? ModuleClass{} : it->second;
}

std::shared_ptr<nn::Module> module_replica(const std::shared_ptr<nn::Module>& module) {
  if (!active_modules || !module) return module;
  const auto it = active_modules->find(module.get());
  return it == active_modules->end() ? module : it->second;
}

}  // namespace detail

namespace nn {

Module::Module(const Module& other)
    : std::enable_shared_from_this<Module>(),  // a copy is a new object, owned anew
      parameters_(other.parameters_),  // Tensor's copy takes the replicas
      buffers_(other.buffers_),
      non_persistent_buffers_(other.non_persistent_buffers_),
      children_(other.children_),
      training_(other.training_) {
  if (locus::detail::replicating()) [[unlikely]]
    for (auto& [name, child] : children_) child = locus::detail::module_replica(child);
}

std::shared_ptr<Module> Module::clone(std::optional<Device> device) const {
  const locus::detail::ModuleCopier copier = locus::detail::find_module_class(typeid(*this)).copy;
  if (!copier)
    throw NotImplementedError("Module [" + name() + "] cannot be cloned: Locus learns how to copy a module class from its "
                              "handle (LOCUS_MODULE), register_module or nn::AnyModule, and this module reached none "
                              "of them; pass it as its handle or as a std::shared_ptr to its own class");
  NoGradGuard no_grad;
  locus::detail::ModuleSubstitution modules;
  locus::detail::TensorSubstitution tensors;
  // Records original -> replica for a module, its tensors and, recursively, its submodules.
  // Structures that differ (a custom clone() may build another one) are matched as far as
  // they agree.
  auto record = [&](auto& self, const Module& original, const std::shared_ptr<Module>& replica) -> void {
    modules.emplace(&original, replica);
    for (const bool params : {true, false}) {
      const auto& from = params ? original.parameters_ : original.buffers_;
      const auto& to = params ? replica->parameters_ : replica->buffers_;
      for (size_t i = 0; i < from.size() && i < to.size(); ++i)
        tensors.emplace(from[i].second.impl(), to[i].second.impl_ptr());
    }
    for (size_t i = 0; i < original.children_.size() && i < replica->children_.size(); ++i)
      self(self, *original.children_[i].second, replica->children_[i].second);
  };
  for (const auto& [child_name, child] : children_) {
    if (modules.count(child.get())) continue;  // registered twice: one replica serves both
    std::shared_ptr<Module> replica = child->clone(device);
    if (!replica || typeid(*replica) != typeid(*child))
      throw ValueError("clone: " + name() + "'s submodule '" + child_name + "' (" + child->name() +
                       ") cloned itself as another class");
    record(record, *child, replica);
  }
  for (const bool params : {true, false})
    for (const auto& [tensor_name, t] : params ? parameters_ : buffers_) {
      if (tensors.count(t.impl())) continue;
      Tensor copy = t.detach().to(device.value_or(t.device()), false, /*copy=*/true);
      if (t.requires_grad()) copy.requires_grad_(true);
      tensors.emplace(t.impl(), copy.impl_ptr());
    }
  std::shared_ptr<Module> copy;
  {
    locus::detail::ReplicationScope scope(modules, tensors);
    copy = copier(*this);
  }
  if (!copy)
    throw NotImplementedError("Module [" + name() + "] cannot be cloned: its class has no copy constructor (a member "
                              "that cannot be copied, or one declared deleted); give it one, or derive it from "
                              "nn::Cloneable<" + name() + "Impl> and build its parts in reset()");
  return copy;
}

}  // namespace nn
}  // namespace locus
