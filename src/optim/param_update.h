#pragma once
// One parameter of an optimizer's step() as its update sees it, and the group's fused kernel
// calls (src/ops/optimizer_step.h) that an update may hand it to.

#include <cstdint>
#include <map>
#include <vector>

#include "locus/tensor.h"
#include "src/ops/optimizer_step.h"

namespace locus::optim::detail {

/// One group's fused calls during a step(), by batch (the parameters that share their
/// hyperparameters: Adam's bias corrections depend on each parameter's step count), run in the
/// batches' order after the group's other updates.
class FusedBatches {
 public:
  /// The fused call of `batch`, made with `hyper` when the batch's first parameter joins.
  ops::FusedUpdate& batch(int64_t batch, const ops::OptimizerHyperparameters& hyper) {
    return batches_.try_emplace(batch, hyper).first->second;
  }
  /// Runs every batch's kernels; returns the indices updated.
  std::vector<size_t> run() {
    std::vector<size_t> done;
    for (auto& [key, fused] : batches_)
      for (size_t i : fused.run()) done.push_back(i);
    return done;
  }

 private:
  std::map<int64_t, ops::FusedUpdate> batches_;
};

/// One parameter of a step(), as Optimizer::update_each hands it to an optimizer's update.
struct ParamUpdate {
  /// Its flat index (for the optimizer's state(), param_step(), param_scalar()).
  size_t index;
  /// What is updated in place: the parameter, or its float32 master copy when master weights
  /// are kept.
  Tensor param;
  /// The gradient, in param's dtype.
  Tensor grad;
  /// The group's fused calls.
  FusedBatches* batches;
  /// Whether fuse() took the update (the group's fused kernels run it later).
  bool fused = false;

  /// Hands the update (the state tensors, undefined where the optimizer keeps none) to the
  /// fused kernel of `batch` and returns true, or returns false when the device cannot take it
  /// (ops::FusedUpdate::add): the caller then updates param with composed ops.
  bool fuse(int64_t batch, const ops::OptimizerHyperparameters& hyper, const Tensor& state1, const Tensor& state2,
            bool fresh) {
    fused = batches->batch(batch, hyper).add(index, param, grad, state1, state2, fresh);
    return fused;
  }
};

}  // namespace locus::optim::detail
