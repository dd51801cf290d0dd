#pragma once
/// \file autograd/node.h
/// The recorded graph as LibTorch shows it (torch/csrc/autograd/function.h): Tensor::grad_fn()
/// is a Node named as in PyTorch ("MulBackward0"), and next_functions() are its edges to the
/// nodes that produced the forward op's inputs. docs/autograd.md describes the engine.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "locus/tensor.h"

namespace locus::autograd {

class Node;

/// One edge of the graph: the node a gradient flows into, and which of its inputs (the forward
/// op's output number) it arrives at. An edge without a function leads nowhere (an input that
/// needs no gradient).
struct Edge {
  Edge() noexcept = default;
  /// The edge into input `nr` of `fn`.
  Edge(std::shared_ptr<Node> fn, uint32_t nr) noexcept : function(std::move(fn)), input_nr(nr) {}
  /// True when a gradient flows along this edge.
  bool is_valid() const noexcept { return function != nullptr; }
  /// The node the gradient flows into.
  std::shared_ptr<Node> function;
  /// Which of the node's inputs it arrives at.
  uint32_t input_nr = 0;
};

/// LibTorch's names for a list of edges and a list of tensors.
using edge_list = std::vector<Edge>;
/// LibTorch's variable_list: gradients or inputs, in order.
using variable_list = std::vector<Tensor>;
/// LibTorch's tensor_list (the same list, the name custom Functions use).
using tensor_list = std::vector<Tensor>;

/// A hook on a gradient: it may return a replacement, or an undefined tensor to keep the
/// gradient as it is (Tensor::register_hook).
using GradHook = std::function<Tensor(const Tensor&)>;

/// One recorded op of the graph: turns the gradients of its forward outputs into gradients of
/// its forward inputs.
class Node : public std::enable_shared_from_this<Node> {
 public:
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// PyTorch's name of the op's backward ("AddBackward0", "ConvolutionBackward0", "AccumulateGrad").
  virtual std::string name() const = 0;
  /// Gradients of the forward inputs from the gradients of the forward outputs (one per
  /// output, undefined where none arrived), as LibTorch's Node::operator().
  variable_list operator()(variable_list&& grads) { return apply(std::move(grads)); }
  /// What operator() runs: one gradient per next_functions() entry (undefined where an input
  /// gets none; fewer entries mean undefined ones at the end).
  virtual variable_list apply(variable_list&& grads) = 0;

  /// Frees what the backward holds once a backward without retain_graph has run through it
  /// (LibTorch's release_variables); nothing for nodes that hold nothing.
  virtual void release_variables() {}

  /// The edges to the producers of the forward op's inputs, in the op's argument order (an
  /// invalid edge where an input needs no gradient).
  const edge_list& next_functions() const noexcept { return next_edges_; }
  /// How many inputs the forward op had (next_functions().size()).
  uint32_t num_outputs() const noexcept { return static_cast<uint32_t>(next_edges_.size()); }
  /// How many outputs the forward op had, each taking a gradient here.
  uint32_t num_inputs() const noexcept { return num_inputs_; }

  /// Adds a hook on the gradient that arrives for forward output `nr`; returns its id
  /// (Tensor::register_hook of a non-leaf tensor).
  uint64_t add_pre_hook(uint32_t nr, GradHook hook);
  /// Removes a hook by id (nothing when it is gone already).
  void remove_pre_hook(uint64_t id);
  /// The gradient for output `nr` after the hooks on it (in the order they were added).
  Tensor run_pre_hooks(uint32_t nr, Tensor grad) const;
  /// Appends the edge for the next forward input.
  void add_next_edge(Edge edge) { next_edges_.push_back(std::move(edge)); }

 protected:
  /// A node for a forward op with `num_inputs` outputs.
  explicit Node(uint32_t num_inputs = 1) noexcept : num_inputs_(num_inputs) {}
  /// Sets the count when it is known only after the forward ran (custom Functions).
  void set_num_inputs(uint32_t n) noexcept { num_inputs_ = n; }

 private:
  edge_list next_edges_;
  uint32_t num_inputs_;
  std::vector<std::tuple<uint64_t, uint32_t, GradHook>> pre_hooks_;
};

}  // namespace locus::autograd

LOCUS_API_END
