#pragma once
// The optimizers' one-pass update, the front end of the fused op OptimizerStep
// (KernelTable::optimizer_step, Note [Fused kernels] in src/ops/fused.h): parameters gathered by
// device and dtype, one kernel call per group. What optim/ includes; the kernel table stays below.

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "locus/tensor.h"
#include "src/ops/optimizer_hyperparameters.h"

namespace locus::ops {

struct KernelTable;

/// Parameters of one step, gathered for the fused kernel of their device and dtype.
class FusedUpdate {
 public:
  /// `hyper`: the kind and hyperparameters of every kernel call (device, dtype and tensors are
  /// filled per group).
  explicit FusedUpdate(const OptimizerHyperparameters& hyper) : hyper_(hyper) {}
  /// Takes parameter `index` (what is updated, its gradient, its state tensors, undefined where
  /// the optimizer keeps none) and returns true, or returns false when its device has no fused
  /// kernel for its dtype or a tensor is not contiguous on that device: the caller then updates
  /// it with composed ops.
  bool add(size_t index, const Tensor& param, const Tensor& grad, const Tensor& state1, const Tensor& state2, bool fresh);
  /// Runs one kernel per group; returns the indices updated.
  std::vector<size_t> run();

 private:
  struct Group {
    const KernelTable* kernels = nullptr;  // the device's, found when the first tensor joined
    std::vector<size_t> indices;
    std::vector<Tensor> keep;  // the tensors whose buffers the kernel gets
    std::vector<char*> params, state1, state2;
    std::vector<const char*> grads;
    std::vector<unsigned char> fresh;
    std::vector<int64_t> numel;
  };
  OptimizerHyperparameters hyper_;
  std::map<std::pair<int, DType>, Group> groups_;  // by device (type and index) and dtype
  std::set<std::uintptr_t> seen_;                     // the buffers of the parameters taken
};

}  // namespace locus::ops
