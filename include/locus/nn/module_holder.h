#pragma once
/// \file module_holder.h
/// Module handles as LibTorch has them: `nn::Linear` is a cheap-to-copy handle that shares one
/// `nn::LinearImpl`, is called like a function and reaches its members with `->`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "locus/errors.h"
#include "locus/nn/forward_hooks.h"
#include "locus/nn/module.h"

namespace locus::nn {

/// A shared handle to a module of type Impl. Copies share the module (as Python names do);
/// `nullptr` makes an empty handle to assign later (`nn::Linear fc{nullptr};`).
template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  // Every constructor that makes or takes a module records how to copy its class, so that
  // Module::clone can replicate it (Note [Replicating modules], src/nn/replicate.cpp).

  /// Impl built with its default constructor (`nn::ReLU()`).
  ModuleHolder()
    requires std::is_default_constructible_v<Impl>
      : impl_(std::make_shared<Impl>()) {
    locus::detail::remember_module_class<Impl>();
  }
  /// An empty handle; using it before assigning a module throws ValueError.
  ModuleHolder(std::nullptr_t) noexcept {}
  /// Wraps an existing module.
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {
    locus::detail::remember_module_class(impl_.get());
  }
  /// Impl built from these arguments (`nn::Linear(784, 256)`).
  template <class Head, class... Tail>
    requires(!(sizeof...(Tail) == 0 && (std::is_base_of_v<ModuleHolder, std::decay_t<Head>> ||
                                         std::is_same_v<std::decay_t<Head>, std::shared_ptr<Impl>> ||
                                         std::is_same_v<std::decay_t<Head>, std::nullptr_t>)) &&
             std::is_constructible_v<Impl, Head, Tail...>)
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {
    locus::detail::remember_module_class<Impl>();
  }
  /// Another handle to the same module; while the module that holds this handle is being
  /// cloned, a handle to the clone of the submodule instead.
  ModuleHolder(const ModuleHolder& other) : impl_(other.impl_) {
    if (locus::detail::replicating()) [[unlikely]]
      impl_ = locus::detail::module_replica_as(impl_);
  }
  ModuleHolder(ModuleHolder&& other) noexcept = default;
  ModuleHolder& operator=(const ModuleHolder& other) = default;
  ModuleHolder& operator=(ModuleHolder&& other) noexcept = default;

  /// The module's members: `model->parameters()`, `fc->weight`.
  Impl* operator->() const { return &get_checked(); }
  Impl& operator*() const { return get_checked(); }
  /// The shared module (null for an empty handle).
  const std::shared_ptr<Impl>& ptr() const noexcept { return impl_; }
  Impl* get() const noexcept { return impl_.get(); }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return impl_ != nullptr; }
  /// Any handle converts to the base pointer that containers and register_module keep.
  operator std::shared_ptr<Module>() const noexcept { return impl_; }

  /// Calls the module's forward with these arguments: `model(x)`, `loss_fn(out, target)`.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    Impl& module = get_checked();
    if (!module.has_forward_hooks()) [[likely]]
      return module.forward(std::forward<Args>(args)...);
    return static_cast<decltype(module.forward(std::forward<Args>(args)...))>(
        detail::forward_with_hooks(module, std::forward<Args>(args)...));
  }
  /// Indexes the module, as LibTorch's handle does: `list[0]`, `seq[1]`, `dict["head"]`.
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const
    requires requires(Impl& impl) { impl[std::forward<Arg>(arg)]; }
  {
    return get_checked()[std::forward<Arg>(arg)];
  }

 private:
  Impl& get_checked() const {
    if (!impl_) throw ValueError("an empty " + module_type_name(typeid(Impl)) + " handle was used; construct it or assign a module first");
    return *impl_;
  }
  std::shared_ptr<Impl> impl_;
};

/// Prints the module tree as PyTorch's print(model) does.
template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& m) {
  if (m.is_empty()) return os << "(empty " << module_type_name(typeid(Impl)) << ")";
  return os << *m;
}

/// Any module handle or pointer, as Sequential and register_module take them.
class AnyModule {
 public:
  template <class Impl>
  AnyModule(const ModuleHolder<Impl>& m) : ptr_(m.ptr()) {
    locus::detail::remember_module_class(m.get());
  }
  template <class M>
    requires std::derived_from<M, Module>
  AnyModule(std::shared_ptr<M> m) {
    locus::detail::remember_module_class(m.get());
    ptr_ = std::move(m);
  }
  /// The module (null only when built from an empty handle).
  const std::shared_ptr<Module>& ptr() const noexcept { return ptr_; }
  /// The module as a T (`any.get<nn::LinearImpl>()`); null when it is another class.
  template <class T>
  std::shared_ptr<T> ptr() const {
    return std::dynamic_pointer_cast<T>(ptr_);
  }
  /// Whether it holds no module.
  bool is_empty() const noexcept { return ptr_ == nullptr; }
  /// The module's forward of one tensor, as LibTorch's `any.forward(x)`: its own forward of any
  /// one-tensor signature (Note [Forward of any signature]). ValueError when empty.
  Tensor forward(const Tensor& input) const {
    if (!ptr_) throw ValueError("an empty AnyModule was called");
    return (*ptr_)(input);
  }

 private:
  std::shared_ptr<Module> ptr_;
};

/// The handle of a container whose modules are named by position (SequentialImpl,
/// ModuleListImpl), with LibTorch's constructors: an empty container, no container (nullptr), an
/// existing one, a braced list or a vector of modules.
template <class Impl>
class ModuleSequenceHolder : public ModuleHolder<Impl> {
 public:
  /// An empty container to push_back into.
  ModuleSequenceHolder() : ModuleHolder<Impl>(std::make_shared<Impl>()) {}
  /// An empty handle.
  ModuleSequenceHolder(std::nullptr_t) noexcept : ModuleHolder<Impl>(nullptr) {}  // NOLINT: implicit, as LibTorch's
  /// Wraps an existing container.
  ModuleSequenceHolder(std::shared_ptr<Impl> impl) noexcept : ModuleHolder<Impl>(std::move(impl)) {}  // NOLINT: implicit
  /// From a braced list of modules.
  ModuleSequenceHolder(std::initializer_list<AnyModule> modules) : ModuleHolder<Impl>(std::make_shared<Impl>(modules)) {}
  /// From a vector of modules.
  explicit ModuleSequenceHolder(const std::vector<AnyModule>& modules)
      : ModuleHolder<Impl>(std::make_shared<Impl>(modules)) {}
};

}  // namespace locus::nn

/// The `to()` methods of a handle class `Name`: each moves or converts the module in place
/// (Module::to) and returns the handle, so `auto m = nn::Linear(10, 5).to(device);` keeps the
/// handle's type. Used by LOCUS_MODULE and by the handles written out by hand.
#define LOCUS_HANDLE_TO_METHODS(Name)                                                                   \
  /** Moves the module in place (Module::to) and returns this handle. */                                \
  Name to(::locus::Device device, bool non_blocking = false) const {                                    \
    (*this)->to(device, non_blocking);                                                                  \
    return *this;                                                                                       \
  }                                                                                                     \
  /** Converts the module's floating tensors in place and returns this handle. */                      \
  Name to(::locus::DType dtype, bool non_blocking = false) const {                                      \
    (*this)->to(dtype, non_blocking);                                                                   \
    return *this;                                                                                       \
  }                                                                                                     \
  /** Both at once. */                                                                                  \
  Name to(::locus::Device device, ::locus::DType dtype, bool non_blocking = false) const {              \
    (*this)->to(device, dtype, non_blocking);                                                           \
    return *this;                                                                                       \
  }

/// Declares the handle `Name` of a module class `NameImpl` (LibTorch's TORCH_MODULE):
/// `struct NetImpl : nn::Module {...}; LOCUS_MODULE(Net);` then `Net net; net(x); net->fc1`.
/// `Name(...).to(device)` returns the handle, so `auto m = nn::Linear(10, 5).to(device);` works.
#define LOCUS_MODULE(Name)                                                                              \
  class Name : public ::locus::nn::ModuleHolder<Name##Impl> {                                           \
   public:                                                                                              \
    using ::locus::nn::ModuleHolder<Name##Impl>::ModuleHolder;                                          \
    Name(const ::locus::nn::ModuleHolder<Name##Impl>& other) : ::locus::nn::ModuleHolder<Name##Impl>(other) {} \
    LOCUS_HANDLE_TO_METHODS(Name)                                                                       \
  }

LOCUS_API_END
