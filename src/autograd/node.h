#pragma once
// The recorded graph's node kinds and the recording API the op front ends call. See Note
// [Autograd] in engine.cpp, Note [Saved tensors] in saved_tensor.cpp and Note [In-place ops in
// the graph] in in_place.cpp.

#include <atomic>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "locus/autograd/node.h"
#include "locus/tensor.h"
#include "src/autograd/saved_tensor.h"

namespace locus::autograd {

/// What a node does when a backward with create_graph runs through it (Note [Double backward]
/// in engine.cpp).
enum class DoubleBackward {
  /// Its backward is written with differentiable ops: it is recorded as it runs.
  Differentiable,
  /// Its backward is a fused kernel; the node recomputes its forward through the composite
  /// path and differentiates that.
  Recompute,
  /// Its backward is a fused kernel without a differentiable form: the gradients it gives
  /// carry a node that refuses, by name, to be differentiated.
  Unsupported,
};

/// A node whose backward is a function (what almost every op needs). The function holds only
/// detached tensors: a saved output that kept its grad_fn would keep itself alive. The ones it
/// reads are declared at record() as saved tensors, so the engine can check their versions,
/// attach them to their history for create_graph, and free them after a backward.
class FunctionNode final : public Node {
 public:
  using Backward = std::function<std::vector<Tensor>(const Tensor&)>;
  /// Recomputes the forward from the inputs, in the order of next_functions().
  using Recompute = std::function<Tensor(const std::vector<Tensor>&)>;
  FunctionNode(const char* name, Backward backward);
  std::string name() const override { return name_; }
  variable_list apply(variable_list&& grads) override;
  /// The name without a std::string (error messages of the op path).
  const char* c_name() const noexcept { return name_; }

  /// Declares a tensor the backward holds (`held`, detached) and the tensor it was taken from
  /// (an input of the op, or its output).
  void save(const Tensor& held, const Tensor& from, bool is_output, Edge edge = {});
  /// Marks the backward as a fused kernel whose double backward recomputes the forward with
  /// `recompute` from `inputs` (held here until the graph is freed).
  void recompute_with(const std::vector<Tensor>& inputs, Recompute recompute);
  /// Marks the backward as a fused kernel without a double backward.
  void no_double_backward() noexcept { double_backward_ = DoubleBackward::Unsupported; }
  /// Frees what the backward holds (after a backward without retain_graph); a later backward
  /// through this node is a ValueError. Nodes that hold no saved tensor keep their function.
  void release_variables() override;
  /// Replaces every saved tensor that shares `storage` by a copy of its values: what an
  /// in-place op does before it overwrites the buffer its own node read (Note [In-place ops in
  /// the graph]).
  void unalias(const detail::Storage* storage);
  /// The order nodes were made in (in-place recording finds the nodes its op made).
  uint64_t sequence() const noexcept { return sequence_; }

 private:
  // The backward with create_graph (Note [Double backward] in engine.cpp).
  std::vector<Tensor> apply_with_graph(const Tensor& grad);
  void check_versions() const;

  const char* name_;
  Backward backward_;
  std::vector<SavedTensor> saved_;
  std::vector<SavedTensor> recompute_inputs_;
  Recompute recompute_;
  DoubleBackward double_backward_ = DoubleBackward::Differentiable;
  bool released_ = false;
  uint64_t sequence_;
};

/// The node of an op with several outputs (split, chunk, unbind): its backward takes one
/// gradient per output, zeros for the outputs that got none, and is written with
/// differentiable ops (so double backward records it as any formula).
class MultiOutputNode final : public Node {
 public:
  using Backward = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  /// `outputs`: the op's results, whose shapes and options the zeros take.
  MultiOutputNode(const char* name, Backward backward, const std::vector<Tensor>& outputs);
  std::string name() const override { return name_; }
  variable_list apply(variable_list&& grads) override;

 private:
  const char* name_;
  Backward backward_;
  std::vector<Shape> shapes_;
  std::vector<TensorOptions> options_;
};

/// Adds incoming gradients into a leaf's grad() (out of place, so no two leaves ever share a
/// gradient buffer), after the leaf's hooks.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(detail::intrusive_ptr<detail::TensorImpl> leaf) : leaf_(std::move(leaf)) {}
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  /// The leaf this node adds into (DistributedDataParallel counts them before backward).
  const detail::TensorImpl* leaf() const noexcept { return leaf_.get(); }
  /// The leaf as a tensor (autograd::grad matches its inputs against it).
  Tensor variable() const { return Tensor(leaf_); }

 private:
  detail::intrusive_ptr<detail::TensorImpl> leaf_;
};

/// The rarely used autograd state of a tensor (TensorImpl::autograd_meta).
struct AutogradMeta {
  /// A leaf's hooks after accumulation (register_post_accumulate_grad_hook), by id.
  std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> post_accumulate_hooks;
  /// A leaf's hooks on its incoming gradient (register_hook), by id; a non-leaf's live on its
  /// grad_fn (Node::add_pre_hook).
  std::vector<std::pair<uint64_t, GradHook>> leaf_hooks;
  /// retain_grad() was called on this non-leaf: its gradient is kept in `retained`.
  bool retains_grad = false;
  Tensor retained;
};

/// The tensor's AutogradMeta, made on first use.
AutogradMeta& autograd_meta(const Tensor& t);
/// How many FunctionNodes were made so far (in-place recording finds the nodes its op made).
uint64_t nodes_made() noexcept;
/// The next id for a hook (unique in the process).
uint64_t next_hook_id();

/// The edge a gradient for `t` flows into: its grad_fn and output number, an AccumulateGrad
/// for a leaf that requires grad, none otherwise. A view whose base changed history since its
/// grad_fn was made gets a new one first (Note [Views and in-place ops]).
Edge gradient_edge(const Tensor& t);

/// Whether an op with these inputs records: grad mode is on and some input requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

/// A tensor the backward holds, with the tensor it was taken from (record's `saved`).
struct SaveFrom {
  const Tensor& held;
  const Tensor& from;
};

/// Links a new node to the producers of `inputs` and makes it `out`'s grad_fn (out then
/// requires grad). `backward` returns one gradient per input, in the same order; `saved` lists
/// the tensors it reads (`from` may be `out` itself). Returns the node, for the fused ops'
/// double-backward marks.
FunctionNode& record(const Tensor& out, const char* name, FunctionNode::Backward backward,
                     std::initializer_list<const Tensor*> inputs, std::initializer_list<SaveFrom> saved = {});
FunctionNode& record(const Tensor& out, const char* name, FunctionNode::Backward backward, const std::vector<Tensor>& inputs,
                     std::initializer_list<SaveFrom> saved = {});
/// Sums a broadcast gradient back down to `shape` and `dtype`.
Tensor sum_to(const Tensor& grad, const Shape& shape, DType dtype);
/// The check and count every write destination passes (in-place and out= forms, copy_,
/// fill_, optimizer updates): a ValueError for read-only memory (Note [Read-only memory]) and
/// for an out= form into a tensor that requires grad while recording; then the buffer's
/// version goes up by one (Note [Saved tensors]).
void prepare_write(const Tensor& t, std::string_view op);
/// prepare_write's checks without the count, for the in-place forms that compute out of place
/// and then write through copy_ (which counts the one write): their errors name the op.
void check_write(const Tensor& t, std::string_view op);

/// Note [In-place ops in the graph]: when the in-place op `op` on `self` with the tensor
/// operands `others` must be recorded (grad mode on, and self or an operand requires grad),
/// does it: `out_of_place()` computes the new value with its node, which is written into self
/// and becomes self's history (its base's, through a CopySlices node, for a view), and returns
/// true. False when nothing needs recording (the caller then runs its kernel in place).
bool record_in_place(const Tensor& self, std::string_view op, std::initializer_list<const Tensor*> others,
                     const std::function<Tensor()>& out_of_place);
/// The first half of record_in_place, for in-place ops whose own writes record themselves
/// (index_put_ writes through views of self): true when the op must be recorded, after
/// PyTorch's refusals (in-place on a leaf that requires grad, or on a view of one).
bool in_place_records(const Tensor& self, std::string_view op, std::initializer_list<const Tensor*> others);
/// Makes `view` a view of `base` for autograd: an in-place op on the view updates the base's
/// history (view ops call it for every view they make).
void mark_view(const Tensor& base, const Tensor& view);

}  // namespace locus::autograd
