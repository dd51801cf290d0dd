#pragma once
/// \file data_parallel.h
/// nn::DataParallel: one model, one process, several devices (torch.nn.DataParallel).

#include <memory>
#include <optional>
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
/// The module must be on device_ids[0] (ValueError at forward otherwise) and cloneable (every
/// built-in layer and Sequential is; a user module derives nn::Cloneable). device_ids defaults to
/// every CUDA device; with none, forward runs the module as it is, as PyTorch does without GPUs.
/// The replicas are built once per device and refreshed from the module at every forward.
class DataParallelImpl : public Module {
 public:
  explicit DataParallelImpl(AnyModule module, std::vector<Device> device_ids = {},
                            std::optional<Device> output_device = std::nullopt);
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
LOCUS_MODULE(DataParallel);

}  // namespace locus::nn
