#pragma once
// How many times backward will add into each leaf: what DistributedDataParallel and fully_shard
// count down to know when a parameter's gradient is final.

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "locus/tensor.h"

namespace locus::autograd {

/// For every leaf in the history of `outputs`, the number of AccumulateGrad nodes that add into
/// it (a parameter used twice in a graph gets two edges into one node, counted once per node:
/// the engine adds a leaf's gradients up before the one accumulation). Leaves not reached are
/// absent.
std::unordered_map<const locus::detail::TensorImpl*, size_t> leaf_accumulations(const std::vector<Tensor>& outputs);

}  // namespace locus::autograd
