#pragma once
/// \file distributed_data_parallel.h
/// nn::DistributedDataParallel: one replica per process, gradients averaged over a process
/// group during backward (torch.nn.parallel.DistributedDataParallel).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "locus/arg.h"
#include "locus/distributed.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// Options of DistributedDataParallel, by name.
struct DistributedDataParallelOptions {
  /// Gradients travel in buckets of about this many MiB (PyTorch's default 25): large enough
  /// to use the network well, small enough that the first starts while backward goes on.
  LOCUS_ARG(double, bucket_cap_mb) = 25;
  /// Parameters that may get no gradient in an iteration (a branch not taken) count as zero
  /// instead of being an error.
  LOCUS_ARG(bool, find_unused_parameters) = false;
  /// Copy rank 0's buffers to every rank before each forward.
  LOCUS_ARG(bool, broadcast_buffers) = true;
};

class DistributedDataParallelImpl;

/// While it lives, backward() only accumulates gradients locally (PyTorch's `with
/// model.no_sync():`); the next backward outside it averages what accumulated.
class NoSyncGuard {
 public:
  explicit NoSyncGuard(DistributedDataParallelImpl& ddp);
  ~NoSyncGuard();
  NoSyncGuard(const NoSyncGuard&) = delete;
  NoSyncGuard& operator=(const NoSyncGuard&) = delete;

 private:
  DistributedDataParallelImpl& ddp_;
  bool previous_;
};

/// Wraps the module of this process. At construction every rank takes rank 0's parameters and
/// buffers. During backward, each bucket of gradients is all-reduced (averaged) as soon as all
/// of its gradients are ready, while backward continues with the rest; when the last bucket is
/// done every parameter's grad() holds the average over the ranks, so an optimizer step gives
/// every rank the same parameters. A parameter that got no gradient in an iteration is an error
/// at the next forward naming it, unless find_unused_parameters. Note [DDP buckets].
class DistributedDataParallelImpl : public Module {
 public:
  explicit DistributedDataParallelImpl(AnyModule module,
                                       std::shared_ptr<distributed::ProcessGroup> group = nullptr,
                                       DistributedDataParallelOptions options = {});
  ~DistributedDataParallelImpl() override;
  /// Not copyable (its gradient hooks belong to one instance), so not replicable either.
  DistributedDataParallelImpl(const DistributedDataParallelImpl&) = delete;
  DistributedDataParallelImpl& operator=(const DistributedDataParallelImpl&) = delete;
  Tensor forward(const Tensor& x) override;
  /// The wrapped module (PyTorch's `.module`).
  const std::shared_ptr<Module>& module() const noexcept { return module_; }
  /// The buckets, as lists of parameter names (for inspection and tests).
  std::vector<std::vector<std::string>> bucket_names() const;

 private:
  friend class NoSyncGuard;
  struct Bucket;
  void on_gradient(size_t param);
  void launch(Bucket& bucket);
  void launch_ready();
  void finish_all();
  void check_previous_iteration();
  void mark_unused(const Tensor& output);

  std::shared_ptr<Module> module_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  DistributedDataParallelOptions options_;
  std::vector<NamedTensor> params_;
  std::vector<uint64_t> hook_ids_;
  std::vector<size_t> bucket_of_;  ///< per parameter
  std::vector<std::unique_ptr<Bucket>> buckets_;
  std::vector<size_t> expected_;  ///< accumulations still to come, per parameter
  size_t buckets_launched_ = 0;
  bool expect_reduction_ = false;
  bool sync_ = true;
};
LOCUS_MODULE(DistributedDataParallel);

}  // namespace locus::nn

LOCUS_API_END
