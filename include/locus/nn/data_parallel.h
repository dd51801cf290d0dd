#pragma once
/// \file data_parallel.h
/// nn::DataParallel: one model, one process, several devices (torch.nn.DataParallel).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// Runs `module` on several devices at once: each forward splits the batch along dim 0 into
/// one chunk per device (as Tensor::chunk does, so a small batch uses fewer devices), runs a
/// replica on each chunk in its own thread, and concatenates the outputs on `output_device`.
/// The replicas' parameters are differentiable copies of the module's, so backward() sums every
/// replica's gradient into the module's own parameters, and an optimizer over
/// `module->parameters()` trains it as on one device.
///
/// The module must be on device_ids[0] (ValueError at forward otherwise). Any module can be
/// replicated: a user module as the docs write it (`struct NetImpl : nn::Module {...};
/// LOCUS_MODULE(Net);`) needs nothing more (Module::clone). device_ids defaults to every device
/// of the accelerator best_device() picks (the CUDA devices, or sim:0, sim:1, ... under
/// LOCUS_DEVICE=sim); with none, forward runs the module as it is, as PyTorch does without
/// GPUs. The replicas are built once per device and refreshed from the module at every forward.
class DataParallelImpl : public Module {
 public:
  /// Over `device_ids` (every device of best_device()'s accelerator when empty), gathering the
  /// outputs on `output_device` (device_ids[0] by default). ValueError for a device listed
  /// twice or an empty module.
  explicit DataParallelImpl(AnyModule module, std::vector<Device> device_ids = {},
                            std::optional<Device> output_device = std::nullopt);
  /// device_ids as PyTorch's integers: indices of best_device()'s accelerator (`{0, 1}` is
  /// cuda:0 and cuda:1, or sim:0 and sim:1 under LOCUS_DEVICE=sim). As in PyTorch, without an
  /// accelerator they are ignored and forward runs the module as it is. A negative index is a
  /// ValueError. (An output_device written `Device(1)` is cuda:1, as Device(int) always is;
  /// pass the integer 1 for the accelerator's device 1.)
  DataParallelImpl(AnyModule module, std::initializer_list<int> device_ids,
                   std::optional<Device> output_device = std::nullopt);
  /// The same with output_device an index of that accelerator too (PyTorch's output_device=1).
  DataParallelImpl(AnyModule module, std::initializer_list<int> device_ids, int output_device);

  Tensor forward(const Tensor& x) override;
  /// The wrapped module (PyTorch's `.module`), whose parameters are the ones trained.
  const std::shared_ptr<Module>& module() const noexcept { return module_; }
  /// The devices the batch is split over, in order.
  const std::vector<Device>& device_ids() const noexcept { return device_ids_; }
  /// Where the outputs are gathered.
  Device output_device() const noexcept { return output_device_; }

 private:
  void check_module_placement() const;
  /// Brings replica k up to date with the module; with `record_grad`, links its parameters
  /// back to the module's (Note [DataParallel gradients]).
  void refresh_replica(size_t k, bool record_grad);

  std::shared_ptr<Module> module_;
  std::vector<Device> device_ids_;
  Device output_device_;
  std::vector<std::shared_ptr<Module>> replicas_;  ///< for device_ids_[1..]; [0] is module_
};

/// The handle of DataParallelImpl. Written out rather than declared with LOCUS_MODULE so that
/// braced device lists reach the constructors (a forwarding constructor cannot take them):
/// `nn::DataParallel(model)`, `nn::DataParallel(model, {0, 1})`,
/// `nn::DataParallel(model, {0, 1}, 1)`,
/// `nn::DataParallel(model, {Device("sim:0"), Device("sim:1")}, Device("sim:1"))`.
class DataParallel : public ModuleHolder<DataParallelImpl> {
 public:
  using ModuleHolder<DataParallelImpl>::ModuleHolder;
  /// DataParallelImpl(module, device_ids, output_device).
  explicit DataParallel(AnyModule module, std::vector<Device> device_ids = {},
                        std::optional<Device> output_device = std::nullopt)
      : ModuleHolder(std::make_shared<DataParallelImpl>(std::move(module), std::move(device_ids), output_device)) {}
  /// Integer device_ids: indices of best_device()'s accelerator.
  explicit DataParallel(AnyModule module, std::initializer_list<int> device_ids,
                        std::optional<Device> output_device = std::nullopt)
      : ModuleHolder(std::make_shared<DataParallelImpl>(std::move(module), device_ids, output_device)) {}
  /// Integer device_ids and output_device.
  explicit DataParallel(AnyModule module, std::initializer_list<int> device_ids, int output_device)
      : ModuleHolder(std::make_shared<DataParallelImpl>(std::move(module), device_ids, output_device)) {}
  LOCUS_HANDLE_TO_METHODS(DataParallel)
};

}  // namespace locus::nn

LOCUS_API_END
