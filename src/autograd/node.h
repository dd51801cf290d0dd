#pragma once
// The recorded graph: one Node per differentiable op, linked to the nodes that produced its
// inputs. See Note [Autograd] in engine.cpp.

#include <functional>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "locus/tensor.h"

namespace locus::autograd {

/// One recorded op: turns the gradient of its output into gradients of its inputs.
class Node {
 public:
  virtual ~Node() = default;
  /// Gradients for each input, in order (undefined where an input needs none).
  virtual std::vector<Tensor> apply(const Tensor& grad) = 0;
  /// The op's name, for error messages ("MulBackward").
  virtual const char* name() const noexcept = 0;
  /// The producer of each input; null where the input needs no gradient.
  std::vector<std::shared_ptr<Node>> next;
};

/// A node whose backward is a function (what almost every op needs). The function must hold
/// only detached tensors: a saved output that kept its grad_fn would keep itself alive.
class FunctionNode final : public Node {
 public:
  using Backward = std::function<std::vector<Tensor>(const Tensor&)>;
  FunctionNode(const char* name, Backward backward) : name_(name), backward_(std::move(backward)) {}
  std::vector<Tensor> apply(const Tensor& grad) override { return backward_(grad); }
  const char* name() const noexcept override { return name_; }

 private:
  const char* name_;
  Backward backward_;
};

/// Adds incoming gradients into a leaf's grad() (out of place, so no two leaves ever share a
/// gradient buffer).
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(detail::intrusive_ptr<detail::TensorImpl> leaf) : leaf_(std::move(leaf)) {}
  std::vector<Tensor> apply(const Tensor& grad) override;
  const char* name() const noexcept override { return "AccumulateGrad"; }
  /// The leaf this node adds into (DistributedDataParallel counts them before backward).
  const detail::TensorImpl* leaf() const noexcept { return leaf_.get(); }

 private:
  detail::intrusive_ptr<detail::TensorImpl> leaf_;
};

/// The post-accumulate hooks of a leaf, by id (Tensor::register_post_accumulate_grad_hook).
struct GradHooks {
  std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> hooks;
};

/// Whether an op with these inputs records: grad mode is on and some input requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);
/// Links `node` to the producers of `inputs` and makes it `out`'s grad_fn (out then requires
/// grad). `backward` returns one gradient per input, in the same order.
void record(const Tensor& out, const char* name, FunctionNode::Backward backward,
            std::initializer_list<const Tensor*> inputs);
void record(const Tensor& out, const char* name, FunctionNode::Backward backward, const std::vector<Tensor>& inputs);
/// Sums a broadcast gradient back down to `shape` and `dtype`.
Tensor sum_to(const Tensor& grad, const Shape& shape, DType dtype);
/// ValueError when `t` requires grad while recording: in-place and out= forms are not
/// differentiable (update parameters under NoGradGuard). Every write destination passes here
/// (in-place and out= forms, copy_, fill_), so it also refuses read-only memory with a
/// ValueError (Note [Read-only memory]).
void check_not_recording_into(const Tensor& t, std::string_view op);

}  // namespace locus::autograd
