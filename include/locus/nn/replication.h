#pragma once
/// \file replication.h
/// What lets Module::clone copy a module class it was never told how to copy: a registry of
/// copy constructors filled by the places that know a module's static type (module handles,
/// register_module, AnyModule), and the replacement of submodules by their replicas while one
/// is copied. Note [Replicating modules], src/nn/replicate.cpp.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <concepts>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "locus/detail/tensor_substitution.h"
#include "locus/errors.h"
#include "locus/tensor.h"

namespace locus::nn {
class Module;
std::string module_type_name(const std::type_info& type);
}  // namespace locus::nn

namespace locus::detail {

/// Copy-constructs a module of the class it was recorded for; null when that class cannot be
/// copied.
using ModuleCopier = std::shared_ptr<nn::Module> (*)(const nn::Module&);

/// Calls a module's own one-tensor forward, however the class declares it (by value, by
/// reference, returning anything that converts to a Tensor): what Module::forward falls back to
/// (Note [Forward of any signature], src/nn/module.cpp).
using ModuleForward = Tensor (*)(nn::Module&, const Tensor&);

/// What Locus learns about a module class from the places that know its static type.
struct ModuleClass {
  /// Its copy constructor (Module::clone); null when it has none.
  ModuleCopier copy = nullptr;
  /// Its own one-tensor forward (Module::forward); null when it has none.
  ModuleForward forward = nullptr;
};

/// Records what is known of modules whose dynamic type is `type` (once per type; later records
/// are ignored).
void add_module_class(const std::type_info& type, ModuleClass module_class);
/// What was recorded for `type`; both null when no handle, register_module or AnyModule has
/// seen the class.
ModuleClass find_module_class(const std::type_info& type);

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

/// Impl's forward called with one tensor; only recorded for an Impl whose dynamic type matched.
template <class Impl>
Tensor call_own_forward(nn::Module& module, const Tensor& input) {
  return static_cast<Impl&>(module).forward(input);
}

/// Whether Impl declares (itself or through a base below Module) a forward that one tensor can
/// call. A class that declares none reaches Module's own, which must not be recorded: it would
/// call itself.
template <class Impl>
constexpr bool has_own_tensor_forward() {
  if constexpr (requires { &Impl::forward; }) {
    if constexpr (std::is_same_v<decltype(&Impl::forward), Tensor (nn::Module::*)(const Tensor&)>) return false;
  }
  return requires(Impl& m, const Tensor& x) {
    { m.forward(x) } -> std::convertible_to<Tensor>;
  };
}

/// Records Impl's copier and its one-tensor forward, the first time only.
template <class Impl>
void remember_module_class() {
  static const bool remembered = [] {
    ModuleClass module_class{&copy_module<Impl>};
    if constexpr (has_own_tensor_forward<Impl>()) module_class.forward = &call_own_forward<Impl>;
    add_module_class(typeid(Impl), module_class);
    return true;
  }();
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
