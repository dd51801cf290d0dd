#pragma once
/// \file module.h
/// nn::Module: parameters, buffers and submodules, moved together (torch.nn.Module).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "locus/nn/replication.h"
#include "locus/ordered_dict.h"
#include "locus/tensor.h"

namespace locus::nn {

/// A named tensor (parameter or buffer), as named_parameters() lists them ("0.weight").
using NamedTensor = std::pair<std::string, Tensor>;

/// What load_state_dict reports, as PyTorch's `_IncompatibleKeys`: the module's keys the dict
/// lacked and the dict's keys the module does not have (both empty after a strict load).
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

/// A module class's name as PyTorch prints it: no namespace, no "Impl" suffix ("Linear").
std::string module_type_name(const std::type_info& type);

/// Base of every layer and model. Holds its parameters (tensors that require grad), buffers
/// (state without gradients) and submodules by name. Not thread-safe: one thread trains a model.
/// Layers are used through their handles (nn::Linear shares an nn::LinearImpl; module_holder.h).
class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  /// A copy that shares the parameters, buffers and submodules, except while clone() builds a
  /// replica: then they are the replica's own (Note [Replicating modules]).
  Module(const Module& other);
  Module& operator=(const Module& other) = default;
  virtual ~Module() = default;
  /// The computation of a module that takes and returns one tensor, as Sequential calls it.
  /// Modules with other signatures (the losses' forward(input, target)) define their own
  /// forward instead; calling this one on them, or on a module that defines none, raises
  /// NotImplementedError as PyTorch does.
  virtual Tensor forward(const Tensor& x);
  /// forward(x) with the module's forward hooks around it.
  Tensor operator()(const Tensor& x);

  /// A function called before each forward that goes through a handle (`model(x)`), Module's
  /// operator(), Sequential or AnyModule, as PyTorch's forward pre-hooks (a direct call of
  /// forward() runs none, as in PyTorch). It sees the call's tensor arguments in order and may
  /// replace them.
  using ForwardPreHook = std::function<void(Module& module, std::vector<Tensor>& inputs)>;
  /// A function called after such a forward with its tensor arguments and the tensors of its
  /// result (a Tensor, or those in a tuple, pair or vector), which it may replace.
  using ForwardHook =
      std::function<void(Module& module, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs)>;
  /// Adds a pre-hook (run in the order added) and returns an id for remove_forward_hook
  /// (PyTorch's register_forward_pre_hook).
  int64_t register_forward_pre_hook(ForwardPreHook hook);
  /// Adds a forward hook (run in the order added) and returns an id for remove_forward_hook
  /// (PyTorch's register_forward_hook).
  int64_t register_forward_hook(ForwardHook hook);
  /// Removes a hook of either kind by its id; nothing when it is gone already.
  void remove_forward_hook(int64_t id);
  /// Replaces the tensor registered as this module's parameter `name` (not a submodule's) by
  /// `value` in parameters(), named_parameters() and state_dict(), leaving the members that hold
  /// the old one as they are: how fully_shard lists a rank's shard while the layer computes
  /// with the gathered tensor. ValueError when the module has no parameter of that name.
  void replace_registered_parameter(const std::string& name, Tensor value);
  /// Whether any forward hook is registered (the call paths skip the hook machinery without).
  bool has_forward_hooks() const noexcept { return !forward_pre_hooks_.empty() || !forward_hooks_.empty(); }
  /// Runs the pre-hooks on `inputs`; what the call paths do before forward.
  void run_forward_pre_hooks(std::vector<Tensor>& inputs);
  /// Runs the forward hooks; what the call paths do after forward.
  void run_forward_hooks(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);

  /// Every parameter, this module's first, then each submodule's (with `recurse`), in
  /// registration order.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// The parameters by dotted name ("0.weight"), in parameters()' order, as LibTorch's
  /// OrderedDict: `for (auto& p : m->named_parameters()) p.key(), p.value()`, or `auto& [name, t]`.
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  /// Every buffer (running statistics, ...), in registration order.
  std::vector<Tensor> buffers(bool recurse = true) const;
  /// The buffers by dotted name, as named_parameters().
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  /// This module (named `name_prefix`, "" by default) and every submodule below it, by dotted
  /// name in PyTorch's order: a module before its children, children as registered, a module
  /// reached twice listed once. Listing itself needs the module to be held by a
  /// std::shared_ptr (module handles and make_shared are); otherwise pass include_self=false,
  /// or it is a ValueError.
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& name_prefix = "",
                                                                  bool include_self = true) const;
  /// The direct submodules in registration order, as LibTorch's children() (a module
  /// registered under two names is listed once, as PyTorch's children()).
  std::vector<std::shared_ptr<Module>> children() const;
  /// The direct submodules by name, as LibTorch's named_children().
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  /// Calls `fn` on every submodule, depth first, then on this module, as PyTorch's
  /// `model.apply(fn)` (LibTorch calls it on the module first; the set is the same):
  /// `model->apply([](nn::Module& m) { if (auto* l = dynamic_cast<nn::LinearImpl*>(&m)) ... });`.
  /// Returns this module, so calls chain.
  Module& apply(const std::function<void(Module&)>& fn);

  /// Moves every parameter, its gradient and every buffer to `device` (and/or converts floating
  /// ones to `dtype`) in place: tensors keep their identity, so an optimizer built before the
  /// move keeps working (its state follows at the next step, or with Optimizer::to). With
  /// `non_blocking`, copies from pinned memory may overlap (Tensor::to). Returns this module,
  /// so calls chain: `model->to(device).eval()`.
  Module& to(Device device, bool non_blocking = false);
  Module& to(DType dtype, bool non_blocking = false);
  Module& to(Device device, DType dtype, bool non_blocking = false);
  /// The one device of all parameters and buffers (cpu for a module with none); ValueError
  /// naming two of them when they are spread over several.
  Device device() const;

  /// Training mode (dropout active) for this module and its submodules; eval() turns it off.
  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const noexcept { return training_; }
  /// Clears every parameter's gradient (set_to_none, the PyTorch 2 default) or zeroes it.
  void zero_grad(bool set_to_none = true);

  /// Parameters and buffers by dotted name, as detached tensors sharing the data, in PyTorch's
  /// order: each module's parameters, then its buffers, then its children's, as registered
  /// (`0.weight, 0.bias, 2.weight, ...`). A std::map copy of it still compiles (sorted).
  OrderedDict<std::string, Tensor> state_dict() const;
  /// Copies values in (to each tensor's own device and dtype). Every problem is found before
  /// anything is copied and reported in one error, leaving the module unchanged: with `strict`,
  /// every missing and every unexpected key; always, every shape mismatch and undefined tensor.
  /// ShapeError when shape mismatches are all there is, ValueError otherwise; the message is
  /// PyTorch's ("Error(s) in loading state_dict for Linear: Missing key(s) in state_dict:
  /// "bias". ..."). With strict=false, returns the missing and unexpected keys instead.
  IncompatibleKeys load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict = true);

  /// The class name print(model) shows ("Linear", or a user module's "Net").
  virtual std::string name() const { return module_type_name(typeid(*this)); }
  /// What print(model) shows inside the parentheses ("in_features=784, ..."), as PyTorch's
  /// extra_repr; empty by default.
  virtual std::string extra_repr() const { return {}; }
  /// The module tree as PyTorch's repr(model), children indented under their names.
  std::string repr() const;

  /// A deep copy with its own parameters, buffers and submodules (copied, on `device` when
  /// given), as LibTorch's clone(): what DataParallel replicates. Any module whose class Locus
  /// has seen through its handle (LOCUS_MODULE), register_module or AnyModule has it: the
  /// submodules are cloned, then the class is copy-constructed with its members pointing at the
  /// clones (Note [Replicating modules]). nn::Cloneable<NetImpl> (cloneable.h) still builds the
  /// copy with reset() instead. NotImplementedError naming the module for a class that was never
  /// seen or cannot be copied.
  virtual std::shared_ptr<Module> clone(std::optional<Device> device = std::nullopt) const;

 protected:
  /// Registers a parameter (it is made to require grad) and returns a handle to it.
  Tensor register_parameter(const std::string& name, Tensor value);
  /// Registers a buffer: state without gradients that to() moves with the parameters. A
  /// non-persistent one (`persistent = false`, as PyTorch's) stays out of state_dict and
  /// load_state_dict: scratch or derived state that a checkpoint must not carry.
  Tensor register_buffer(const std::string& name, Tensor value, bool persistent = true);
  /// Forgets every registered parameter, buffer and submodule (Cloneable::clone, before reset()).
  void clear_registrations() noexcept;
  /// Copies `source`'s parameter and buffer values into this module's tensors of the same
  /// names (to `device` when given, else to the source tensor's device), replacing their data.
  /// ValueError when the two modules do not have the same names.
  void copy_state_from(const Module& source, std::optional<Device> device);
  /// Registers a submodule under `name` (its tensors become "name.weight", ...) and returns it:
  /// `fc1 = register_module("fc1", nn::Linear(784, 64));`. ValueError for an empty module.
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    locus::detail::remember_module_class(module.get());
    add_child(name, module);
    return module;
  }
  /// The same for a module handle (nn::Linear, a LOCUS_MODULE); returns the handle.
  template <class Handle>
    requires requires(const Handle& h) { h.ptr(); typename Handle::ContainedType; }
  Handle register_module(const std::string& name, Handle module) {
    locus::detail::remember_module_class(module.ptr().get());
    add_child(name, module.ptr());
    return module;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void collect(const std::string& prefix, bool params, bool recurse, OrderedDict<std::string, Tensor>& out) const;
  void collect_state(const std::string& prefix, OrderedDict<std::string, Tensor>& out) const;
  void move(std::optional<Device> device, std::optional<DType> dtype, bool non_blocking);
  std::vector<NamedTensor> parameters_, buffers_;
  std::vector<std::string> non_persistent_buffers_;  // names in buffers_ that state_dict skips
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
  // A copy (a replica) starts without hooks: they belong to the module they were added to.
  std::vector<std::pair<int64_t, ForwardPreHook>> forward_pre_hooks_;
  std::vector<std::pair<int64_t, ForwardHook>> forward_hooks_;
};

/// Prints module.repr(): `std::cout << *model`.
std::ostream& operator<<(std::ostream& os, const Module& module);

}  // namespace locus::nn

LOCUS_API_END
