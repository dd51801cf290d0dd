#pragma once
/// \file containers.h
/// The containers of torch.nn, as LibTorch spells them: ModuleList (modules by position),
/// ModuleDict (modules by name, in insertion order) and ParameterList (parameters by position).
/// Their contents are registered submodules and parameters, so state_dict names them as
/// PyTorch does (`layers.0.weight`, `heads.cls.bias`, `scales.1`), to() moves them and
/// DataParallel replicates them. None has a forward: a model's own forward iterates them.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "locus/errors.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/ordered_dict.h"

namespace locus::nn {

namespace detail {
/// IndexError "<container> index i is out of range ..." (thrown out of line).
[[noreturn]] void container_index_error(const char* container, size_t index, size_t size);
/// ValueError "Unable to cast module[where] to T" for at<T>() (thrown out of line).
[[noreturn]] void container_cast_error(const char* container, const std::string& where, const std::type_info& type);
}  // namespace detail

/// Modules by position, named "0", "1", ... as PyTorch's nn.ModuleList:
/// `nn::ModuleList layers; layers->push_back(nn::Linear(4, 4)); for (auto& m : *layers) ...`.
class ModuleListImpl : public Module {
 public:
  /// An empty list.
  ModuleListImpl() = default;
  /// From a braced list of modules.
  ModuleListImpl(std::initializer_list<AnyModule> modules);
  /// From a vector of modules.
  explicit ModuleListImpl(const std::vector<AnyModule>& modules);

  /// Appends a module, named by its position. ValueError for an empty handle.
  void push_back(const AnyModule& module);
  /// Appends every module of `modules` (a vector of modules, another list's `*list`, ...).
  template <class Container>
  void extend(const Container& modules) {
    for (const auto& m : modules) push_back(AnyModule(m));
  }
  /// Inserts a module before position `index` (0..size()); the ones after it are renamed, as
  /// PyTorch's insert does. IndexError past size().
  void insert(size_t index, const AnyModule& module);

  /// The module at `index`; IndexError past the end.
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  /// The module at `index`; IndexError past the end.
  const std::shared_ptr<Module>& ptr(size_t index) const;
  /// The module at `index` as a T, or null when it is another class (LibTorch's ptr<T>).
  template <class T>
  std::shared_ptr<T> ptr(size_t index) const {
    return std::dynamic_pointer_cast<T>(ptr(index));
  }
  /// The module at `index` as a T (`list->at<nn::LinearImpl>(0).weight`); ValueError when it is
  /// another class, IndexError past the end.
  template <class T>
  T& at(size_t index) const {
    T* m = dynamic_cast<T*>(ptr(index).get());
    if (!m) detail::container_cast_error("ModuleList", std::to_string(index), typeid(T));
    return *m;
  }

  /// How many modules it holds.
  size_t size() const noexcept { return modules_.size(); }
  /// Whether it holds none.
  bool is_empty() const noexcept { return modules_.empty(); }
  /// The modules in order.
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const noexcept { return modules_.begin(); }
  /// The end of the modules.
  std::vector<std::shared_ptr<Module>>::const_iterator end() const noexcept { return modules_.end(); }

  /// A list of clones of its modules (to()/DataParallel replication, Note [Replicating modules]).
  std::shared_ptr<Module> clone(std::optional<Device> device = std::nullopt) const override;

 private:
  void register_all();
  std::vector<std::shared_ptr<Module>> modules_;
};

/// The handle of ModuleListImpl: `nn::ModuleList{nn::Linear(4, 8), nn::ReLU()}`.
class ModuleList : public ModuleSequenceHolder<ModuleListImpl> {
 public:
  using ModuleSequenceHolder<ModuleListImpl>::ModuleSequenceHolder;
  /// From modules given as arguments: `nn::ModuleList(nn::Linear(4, 3), nn::ReLU())`.
  template <class... M>
    requires(sizeof...(M) >= 1 && (std::is_convertible_v<M, AnyModule> && ...) &&
             !(sizeof...(M) == 1 && (std::is_same_v<std::decay_t<M>, ModuleList> && ...)))
  explicit ModuleList(M&&... modules)
      : ModuleSequenceHolder<ModuleListImpl>({AnyModule(std::forward<M>(modules))...}) {}
  LOCUS_HANDLE_TO_METHODS(ModuleList)
};

/// Modules by name in insertion order, as PyTorch's nn.ModuleDict:
/// `nn::ModuleDict heads({{"cls", nn::Linear(8, 10)}, {"box", nn::Linear(8, 4)}});`.
class ModuleDictImpl : public Module {
 public:
  /// An empty dict.
  ModuleDictImpl() = default;
  /// From (name, module) pairs, in their order; a repeated name keeps its first place and the
  /// last module, as update() does.
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, AnyModule>>& modules);
  /// From an ordered dict of modules.
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules);

  /// Adds `module` under `key`, or replaces the module of `key` where it stands. ValueError for an
  /// empty module or a name that is empty or has a '.'.
  void insert(const std::string& key, const AnyModule& module);
  /// insert() of every (name, module) pair of `modules`, in order (PyTorch's update).
  template <class Container>
  void update(const Container& modules) {
    for (const auto& [key, m] : modules) insert(key, AnyModule(m));
  }
  /// Removes `key` and returns its module; IndexError (Python's KeyError) when absent.
  std::shared_ptr<Module> pop(const std::string& key);
  /// Removes every module.
  void clear();

  /// The module of `key`; IndexError when absent.
  std::shared_ptr<Module> operator[](const std::string& key) const;
  /// The module of `key` as a T; ValueError when it is another class, IndexError when absent.
  template <class T>
  T& at(const std::string& key) const {
    T* m = dynamic_cast<T*>((*this)[key].get());
    if (!m) detail::container_cast_error("ModuleDict", key, typeid(T));
    return *m;
  }
  /// Whether it holds a module named `key`.
  bool contains(const std::string& key) const { return modules_.contains(key); }
  /// The names, in insertion order.
  std::vector<std::string> keys() const { return modules_.keys(); }
  /// The modules, in insertion order.
  std::vector<std::shared_ptr<Module>> values() const { return modules_.values(); }
  /// The (name, module) pairs, in insertion order.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const;
  /// How many modules it holds.
  size_t size() const noexcept { return modules_.size(); }
  /// Whether it holds none.
  bool empty() const noexcept { return modules_.empty(); }
  /// The (name, module) items in order.
  OrderedDict<std::string, std::shared_ptr<Module>>::const_iterator begin() const noexcept { return modules_.begin(); }
  /// The end of the items.
  OrderedDict<std::string, std::shared_ptr<Module>>::const_iterator end() const noexcept { return modules_.end(); }

  /// A dict of clones of its modules (Note [Replicating modules]).
  std::shared_ptr<Module> clone(std::optional<Device> device = std::nullopt) const override;

 private:
  void register_all();
  OrderedDict<std::string, std::shared_ptr<Module>> modules_;
};
LOCUS_MODULE(ModuleDict);

/// Parameters by position, named "0", "1", ... as PyTorch's nn.ParameterList:
/// `nn::ParameterList scales; scales->append(torch::ones({4}));`. Appended tensors are made to
/// require grad (floating ones), as PyTorch wraps them in Parameter.
class ParameterListImpl : public Module {
 public:
  /// An empty list.
  ParameterListImpl() = default;
  /// From a braced list of tensors.
  ParameterListImpl(std::initializer_list<Tensor> params);
  /// From a vector of tensors.
  explicit ParameterListImpl(const std::vector<Tensor>& params);

  /// Appends a parameter, named by its position. ValueError for an undefined tensor.
  void append(Tensor param);
  /// Appends every tensor of `params`.
  template <class Container>
  void extend(const Container& params) {
    for (const Tensor& p : params) append(p);
  }
  /// The parameter at `index`; IndexError past the end.
  const Tensor& operator[](size_t index) const { return at(index); }
  /// The parameter at `index`; IndexError past the end.
  const Tensor& at(size_t index) const;
  /// How many parameters it holds.
  size_t size() const noexcept { return params_.size(); }
  /// Whether it holds none.
  bool is_empty() const noexcept { return params_.empty(); }
  /// The parameters in order.
  std::vector<Tensor>::const_iterator begin() const noexcept { return params_.begin(); }
  /// The end of the parameters.
  std::vector<Tensor>::const_iterator end() const noexcept { return params_.end(); }
  /// PyTorch's lines "(0): Parameter containing: [torch.float32 of size 3x4]".
  std::string extra_repr() const override;

 private:
  std::vector<Tensor> params_;
};
LOCUS_MODULE(ParameterList);

}  // namespace locus::nn

LOCUS_API_END
