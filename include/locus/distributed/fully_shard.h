#pragma once
/// \file fully_shard.h
/// Sharded data parallelism (PyTorch's FSDP2 `fully_shard`, DeepSpeed's ZeRO stages 1-3): each
/// rank keeps 1/size of every parameter (rows of dim 0), its gradient and its optimizer state,
/// and gathers a module's whole parameters only while that module computes. docs/distributed.md
/// has the strategies with their memory arithmetic.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <memory>
#include <optional>
#include <vector>

#include "locus/arg.h"
#include "locus/distributed.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::distributed {

/// What is sharded across the ranks, and so how much each rank holds between and during steps.
enum class ShardingStrategy {
  /// Parameters, gradients and optimizer state (FSDP's FULL_SHARD, ZeRO stage 3): a module's
  /// parameters are gathered before its forward, freed after it, gathered again for its backward.
  FullShard,
  /// Gradients and optimizer state; parameters stay gathered from a module's forward through its
  /// backward (FSDP's SHARD_GRAD_OP, ZeRO stage 2): one gather a step instead of two.
  ShardGradOp,
  /// Optimizer state only (ZeRO stage 1): parameters stay gathered, gradients stay whole until
  /// backward has finished, then each rank keeps the average of its rows.
  ShardOptimizerState,
};

/// The dtypes a sharded module computes and reduces in (FSDP2's MixedPrecisionPolicy). The
/// shards, the optimizer and its state stay in the parameters' own dtype (float32 masters).
struct MixedPrecisionPolicy {
  /// The dtype parameters are gathered and computed in (bfloat16, float16); none: their own.
  LOCUS_ARG(std::optional<DType>, param_dtype) = std::nullopt;
  /// The dtype gradients are averaged in across ranks; none: param_dtype's (float32 is the safe
  /// choice with a 16-bit param_dtype).
  LOCUS_ARG(std::optional<DType>, reduce_dtype) = std::nullopt;
  /// The dtype the module's floating outputs are cast to; none: as computed.
  LOCUS_ARG(std::optional<DType>, output_dtype) = std::nullopt;
  /// Casts floating inputs of the forward to param_dtype.
  LOCUS_ARG(bool, cast_forward_inputs) = true;
};

/// Options of fully_shard, by name.
struct FullyShardOptions {
  /// What is sharded (ZeRO stage 3, 2 or 1).
  LOCUS_ARG(ShardingStrategy, strategy) = ShardingStrategy::FullShard;
  /// FSDP2's reshard_after_forward: free the gathered parameters after the forward (and gather
  /// them again for the backward). None: true for FullShard, false for the others. The
  /// outermost sharded module keeps its parameters for the backward that follows at once.
  LOCUS_ARG(std::optional<bool>, reshard_after_forward) = std::nullopt;
  /// Casts for computing in 16 bits with float32 masters.
  LOCUS_ARG(MixedPrecisionPolicy, mp_policy);
  /// The device of this rank's shards and gathered parameters; none: where the parameters are.
  /// A model built on the CPU goes to its device a shard at a time, so it never needs to fit
  /// there whole.
  LOCUS_ARG(std::optional<Device>, device) = std::nullopt;
  /// Starts gathering the next module's parameters while the current one computes (forward) and
  /// the previous one's during backward, as FSDP's forward and backward prefetch.
  LOCUS_ARG(bool, prefetch) = true;
};

namespace detail {
struct ShardedUnit;
}

/// A module that fully_shard sharded (FSDP2's FSDPModule): the calls PyTorch adds to it.
class FSDPModule {
 public:
  /// Gathers the module's parameters now (and keeps them until reshard() or the next point the
  /// strategy frees them).
  void unshard();
  /// Frees the gathered parameters (nothing when they are not gathered).
  void reshard();
  /// With false, backward accumulates whole gradients locally and reduces nothing (gradient
  /// accumulation, as DDP's no_sync); the next backward with true averages what accumulated.
  void set_requires_gradient_sync(bool sync);
  /// The module.
  nn::Module& module() const;
  /// The process group its parameters are sharded over.
  ProcessGroup& group() const;

 private:
  friend FSDPModule fully_shard(nn::AnyModule, std::shared_ptr<ProcessGroup>, FullyShardOptions);
  explicit FSDPModule(std::shared_ptr<detail::ShardedUnit> unit) : unit_(std::move(unit)) {}
  std::shared_ptr<detail::ShardedUnit> unit_;
};

/// Shards `module`'s parameters over `group` (the default group when null), those that no
/// fully_shard call on one of its submodules took already; call it on the blocks first and the
/// root last, as in PyTorch (`for (auto& layer : layers) fully_shard(layer); fully_shard(model);`).
/// Every rank starts from rank 0's values; then rank r keeps rows [r * ceil(d0 / size), ...)
/// of each parameter (torch.chunk's split), and `module->parameters()`, `named_parameters()`
/// and `state_dict()` list those shards under the parameters' own names, so an optimizer built
/// on them afterwards holds and steps only this rank's part. Each forward through the module
/// (`model(x)`, a Sequential, a handle) gathers the parameters first and backward averages the
/// gradients over the ranks into the shards' grad() (Note [Sharded units]). Parameters used
/// by two sharded modules (tied weights) must belong to a module that contains both.
/// ValueError for a module with nothing left to shard and no submodule that is sharded.
FSDPModule fully_shard(nn::AnyModule module, std::shared_ptr<ProcessGroup> group = nullptr,
                       FullyShardOptions options = {});

/// Whether `parameter` is a shard that fully_shard made (whose grad() holds one rank's rows).
bool is_sharded(const Tensor& parameter);

}  // namespace locus::distributed

LOCUS_API_END
