#pragma once
/// \file replication.h
/// What lets Module::clone copy a module class it was never told how to copy: a registry of
/// copy constructors filled by the places that know a module's static type (module handles,
/// register_module, AnyModule), and the replacement of submodules by their replicas while one
/// is copied. Note [Replicating modules], src/nn/replicate.cpp.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "locus/detail/tensor_substitution.h"
#include "locus/errors.h"

namespace locus::nn {
class Module;
std::string module_type_name(const std::type_info& type);
}  // namespace locus::nn

namespace locus::detail {

/// Copy-constructs a module of the class it was recorded for; null when that class cannot be
/// copied.
using ModuleCopier = std::shared_ptr<nn::Module> (*)(const nn::Module&);

/// Records how to copy modules whose dynamic type is `type` (once per type; later records are
/// ignored).
void add_module_copier(const std::type_info& type, ModuleCopier copier);
/// The copier recorded for `type`; null when no handle, register_module or AnyModule has seen
/// the class.
ModuleCopier find_module_copier(const std::type_info& type);

/// The copier of Impl: its copy constructor, or null for a class without one (a member that
/// cannot be copied, or a copy constructor declared `= delete`).
template <class Impl>
std::shared_ptr<nn::Module> copy_module(const nn::Module& module) {
  if constexpr (std::is_copy_constructible_v<Impl>) {
    return std::make_shared<Impl>(dynamic_cast<const Impl&>(module));
  } else {
    return nullptr;
  }
}

/// Records Impl's copier, the first time only.
template <class Impl>
void remember_module_class() {
  static const bool remembered = (add_module_copier(typeid(Impl), &copy_module<Impl>), true);
  (void)remembered;
}

/// Records Impl's copier when `module` is exactly an Impl: a module reached through a pointer
/// to a base class is not recorded, so a copy never slices it.
template <class Impl>
void remember_module_class(const Impl* module) {
  if (module && typeid(*module) == typeid(Impl)) remember_module_class<Impl>();
}

/// The replica of `module` while Module::clone copy-constructs the module that holds it on
/// this thread; `module` itself otherwise.
std::shared_ptr<nn::Module> module_replica(const std::shared_ptr<nn::Module>& module);

/// module_replica for a handle's pointer: the replica, of the same class, or `module`.
template <class Impl>
std::shared_ptr<Impl> module_replica_as(const std::shared_ptr<Impl>& module) {
  std::shared_ptr<nn::Module> replica = module_replica(module);
  if (replica.get() == static_cast<const nn::Module*>(module.get())) return module;
  std::shared_ptr<Impl> typed = std::dynamic_pointer_cast<Impl>(replica);
  if (!typed) throw ValueError("clone: the replica of a submodule is not a " + nn::module_type_name(typeid(Impl)));
  return typed;
}

/// True while some thread replicates a module: the cheap test before module_replica.
inline bool replicating() noexcept {
  return substituting_threads.load(std::memory_order_relaxed) != 0;
}

}  // namespace locus::detail

LOCUS_API_END
