#pragma once
// The backward pass over the recorded graph (Note [Autograd] in engine.cpp), for backward(),
// autograd::grad() and the double backward of fused nodes.

#include <vector>

#include "locus/tensor.h"

namespace locus::autograd {

/// What one pass over the graph does.
struct GraphRun {
  /// Keep the saved tensors (retain_graph); otherwise each node frees them after it ran.
  bool keep_graph = false;
  /// Record the backward itself (create_graph).
  bool create_graph = false;
  /// Add into the grad() of the leaves reached (backward); otherwise nothing is accumulated.
  bool accumulate = true;
  /// Return the gradients of these tensors (autograd::grad); only the nodes that lead to them run.
  std::vector<Tensor> inputs;
  /// Do not run on past `inputs` (the double backward of a fused node, whose inputs' own
  /// history the outer backward runs).
  bool stop_at_inputs = false;
};

/// Runs the graph from `roots`, seeded with `seeds` (one per root, already checked), and
/// returns the gradients of `run.inputs` (undefined for inputs the gradient did not reach).
std::vector<Tensor> run_graph(const std::vector<Tensor>& roots, const std::vector<Tensor>& seeds, const GraphRun& run);

/// The double backward of a fused node (Note [Double backward]): the gradients of `out`, its
/// forward recomputed from the attached `inputs`, weighted by `grad`, recorded.
std::vector<Tensor> differentiate_recomputed(const Tensor& out, const std::vector<Tensor>& inputs, const Tensor& grad);

}  // namespace locus::autograd
