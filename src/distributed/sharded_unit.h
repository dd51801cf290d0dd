#pragma once
// The state fully_shard keeps for a module it sharded: its parameters split by rows, the
// gathering and freeing of their whole values, and the reduction of their gradients (Note
// [Sharded units] in fully_shard.cpp). Also read by the state-dict and checkpoint functions,
// clip_grad_norm_ and GradScaler, through find_shard.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "locus/distributed/fully_shard.h"
#include "locus/tensor.h"

namespace locus::distributed::detail {

/// One parameter split into rows of dim 0 (Note [Shard geometry] in fully_shard.cpp).
struct ShardedParam {
  std::string name;      ///< in the unit's module ("0.weight")
  Tensor full;           ///< the tensor the layer computes with: its member, a leaf
  Tensor shard;          ///< this rank's rows, registered in the owner's parameter list
  Shape full_shape;      ///< the whole parameter's shape
  int64_t rows = 0;      ///< rows of dim 0 (1 for a 0-dim parameter)
  int64_t row_numel = 0;       ///< elements per row
  int64_t rows_per_rank = 0;   ///< ceil(rows / size): every rank's slot in the flat buffers
  int64_t first_row = 0;       ///< this rank's first row
  int64_t local_rows = 0;      ///< the rows this rank holds (fewer on the last ranks)
  int64_t offset = 0;          ///< where its slot starts in the unit's per-rank flat buffer
  Tensor forward_view;   ///< the gathered values the forward used (Note [Resharding in place])
  size_t pending = 0;    ///< gradient accumulations still to come in this backward
  uint64_t hook = 0;     ///< its post-accumulate-grad hook

  /// The elements of its slot per rank.
  int64_t slot_numel() const noexcept { return rows_per_rank * row_numel; }
  /// The first row and the row count rank `r` holds of `rows` rows split `size` ways.
  static std::pair<int64_t, int64_t> rows_of(int64_t rows, int64_t size, int64_t r);
};

struct Iteration;

/// A module fully_shard sharded.
struct ShardedUnit : std::enable_shared_from_this<ShardedUnit> {
  enum class Phase { Sharded, Gathering, Gathered };

  std::weak_ptr<nn::Module> module;  ///< which owns the unit, through its forward hooks
  std::shared_ptr<ProcessGroup> group;
  bool is_root = true;                 ///< no sharded module contains this one
  FullyShardOptions options;
  bool reshard_after_forward = true;   ///< free after forward, gather again in backward
  bool reshard_after_backward = true;  ///< free once its gradients are reduced
  bool reduce_at_end = false;          ///< reduce with every unit at the end of backward (ZeRO-1)
  DType compute_dtype = DType::Float32;  ///< what the parameters are gathered in
  DType reduce_dtype = DType::Float32;   ///< what the gradients are averaged in
  Device device{DeviceType::CPU};
  std::vector<ShardedParam> params;
  int64_t flat_numel = 0;  ///< elements of one rank's slot of every parameter together

  Phase phase = Phase::Sharded;
  Tensor gathered;                          ///< the all-gather's output while it runs
  std::shared_ptr<Work> gather_work;
  bool sync = true;                         ///< set_requires_gradient_sync
  std::shared_ptr<Iteration> iteration;     ///< the forward-backward it is part of (set by the root)
  size_t pending_params = 0;                ///< parameters whose gradient is not final yet
  Tensor reduced;                           ///< the reduce-scatter's output while it runs
  Tensor grad_buffer;                       ///< the last one: the memory the shards' gradients view
  std::shared_ptr<Work> reduce_work;

  ~ShardedUnit();
  /// Starts the all-gather of the parameters (when they are sharded).
  void start_gather();
  /// Finishes the all-gather and points every parameter at its whole values.
  void finish_gather();
  /// Both: the parameters are whole afterwards.
  void unshard() {
    start_gather();
    finish_gather();
  }
  /// Frees the whole values. `after_forward`: with a backward to come, so the memory under the
  /// tensors it saved is taken out and the buffer kept for finish_gather to refill (Note
  /// [Resharding in place]); otherwise this unit's handles are dropped, and the memory goes when
  /// the graph lets go of it.
  void reshard(bool after_forward = false);
  /// Starts the reduce-scatter of the whole gradients into the shards' slots.
  void start_reduce();
  /// Waits for it and adds each rank's rows into the shards' grad().
  void finish_reduce();
};

/// The forward and backward of one call of an outermost sharded module.
struct Iteration {
  std::vector<ShardedUnit*> order;           ///< the units, in the order their forwards ran
  std::vector<ShardedUnit*> previous_order;  ///< last iteration's, for prefetching
  size_t ready = 0;                          ///< units whose gradients are all final
  size_t launched = 0;                       ///< units whose reduce-scatter started, in launch order
  std::vector<ShardedUnit*> launch_order;    ///< the reverse of `order`: backward's
  bool in_forward = false;        ///< the outermost module's forward is running
  bool backward_expected = false;  ///< gradients are to be reduced
};

/// Starts the reduce-scatters of the units that are ready, in launch order; once all have
/// started, waits for them and gives the shards their gradients.
void launch_ready(Iteration& it);

/// The shard fully_shard made for `parameter` and its unit; {nullptr, nullptr} for any other tensor.
std::pair<const ShardedParam*, const ShardedUnit*> find_shard(const Tensor& parameter);

/// Every sharded unit inside `module` (itself included), in named_modules() order.
std::vector<std::shared_ptr<ShardedUnit>> units_within(const nn::Module& module);

}  // namespace locus::distributed::detail
