#pragma once
/// \file module.h
/// nn::Module: parameters, buffers and submodules, moved together (torch.nn.Module).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "locus/tensor.h"

namespace locus::nn {

/// A named tensor (parameter or buffer), as named_parameters() lists them ("0.weight").
using NamedTensor = std::pair<std::string, Tensor>;

/// Base of every layer and model. Holds its parameters (tensors that require grad), buffers
/// (state without gradients) and submodules by name. Not thread-safe: one thread trains a model.
class Module {
 public:
  virtual ~Module() = default;
  /// The computation. Modules here take and return one tensor.
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }

  /// Every parameter, this module's first, then each submodule's, in registration order.
  std::vector<Tensor> parameters() const;
  std::vector<NamedTensor> named_parameters() const;
  std::vector<NamedTensor> named_buffers() const;
  /// The direct submodules, by name.
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const noexcept { return children_; }

  /// Moves every parameter, its gradient and every buffer to `device` (and/or converts floating
  /// ones to `dtype`) in place: tensors keep their identity, so an optimizer built before the
  /// move keeps working (its state follows at the next step, or with Optimizer::to).
  Module& to(Device device);
  Module& to(DType dtype);
  Module& to(Device device, DType dtype);
  /// The one device of all parameters and buffers (cpu for a module with none); ValueError
  /// naming two of them when they are spread over several.
  Device device() const;

  /// Training mode (dropout active) for this module and its submodules; eval() turns it off.
  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const noexcept { return training_; }
  /// Clears every parameter's gradient (set_to_none, the PyTorch 2 default) or zeroes it.
  void zero_grad(bool set_to_none = true);

  /// Parameters and buffers by dotted name, as detached tensors sharing the data.
  std::map<std::string, Tensor> state_dict() const;
  /// Copies values in (to each tensor's own device and dtype). With `strict`, a missing or
  /// unexpected key throws ValueError naming it; a shape mismatch always throws ShapeError.
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);

 protected:
  /// Registers a parameter (it is made to require grad) and returns a handle to it.
  Tensor register_parameter(const std::string& name, Tensor value);
  Tensor register_buffer(const std::string& name, Tensor value);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void collect(const std::string& prefix, bool params, std::vector<NamedTensor>& out) const;
  void move(std::optional<Device> device, std::optional<DType> dtype);
  std::vector<NamedTensor> parameters_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

}  // namespace locus::nn
