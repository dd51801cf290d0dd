// Note [Autograd]
// Ops record a graph while grad mode is on and an input requires grad: the output's grad_fn is
// a Node whose `next` edges point at the producers of its inputs (or at an AccumulateGrad for
// a leaf). backward() counts, for every node reachable from the root, how many edges lead into
// it, then runs nodes in an order where each runs once, after all its consumers have handed it
// their gradients (summed). Backward runs with recording off, so it builds no graph, and each
// gradient stays on the device of the tensor it belongs to: the backward of to() copies it back
// to where the input lived, so a graph that crosses devices back-propagates.

#include <atomic>
#include <sstream>
#include <unordered_map>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/ops/autocast.h"

namespace locus {
namespace {
thread_local bool t_grad_enabled = true;
}

bool is_grad_enabled() noexcept { return t_grad_enabled; }
void set_grad_enabled(bool enabled) noexcept { t_grad_enabled = enabled; }

namespace autograd {

std::vector<Tensor> AccumulateGrad::apply(const Tensor& grad) {
  Tensor g = grad.dtype() == leaf_->dtype() ? grad : grad.to(leaf_->dtype());
  if (leaf_->grad()) {
    g = add(Tensor(leaf_->grad()), g);
  } else if (g.impl()->storage()->use_count() > 1) {
    // The same buffer may also be another leaf's gradient (y = a + b hands both the same g):
    // each leaf owns its own, so changing one grad in place never changes another.
    g = g.clone();
  }
  leaf_->set_grad(detail::intrusive_ptr<detail::TensorImpl>(g.detach().impl()));
  if (const auto hooks = leaf_->grad_hooks()) {  // a copy: a hook may remove itself
    const Tensor leaf(leaf_);
    for (const auto& [id, hook] : std::vector(hooks->hooks)) hook(leaf);
  }
  return {};
}

namespace {

std::shared_ptr<Node> edge_of(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return nullptr;
  if (const auto& fn = t.impl()->grad_fn()) return fn;
  return std::make_shared<AccumulateGrad>(detail::intrusive_ptr<detail::TensorImpl>(t.impl()));
}

void link(const Tensor& out, std::shared_ptr<FunctionNode> node) {
  out.impl()->set_grad_fn(std::move(node));
  out.impl()->set_requires_grad(true);
}

}  // namespace

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!t_grad_enabled) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!t_grad_enabled) return false;
  for (const Tensor& t : inputs)
    if (t.requires_grad()) return true;
  return false;
}

void record(const Tensor& out, const char* name, FunctionNode::Backward backward,
            std::initializer_list<const Tensor*> inputs) {
  auto node = std::make_shared<FunctionNode>(name, std::move(backward));
  for (const Tensor* t : inputs) node->next.push_back(edge_of(*t));
  link(out, std::move(node));
}

void record(const Tensor& out, const char* name, FunctionNode::Backward backward, const std::vector<Tensor>& inputs) {
  auto node = std::make_shared<FunctionNode>(name, std::move(backward));
  for (const Tensor& t : inputs) node->next.push_back(edge_of(t));
  link(out, std::move(node));
}

Tensor sum_to(const Tensor& grad, const Shape& shape, DType dtype) {
  Tensor g = grad;
  if (!(g.shape() == shape)) {
    const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
    Shape dims;
    for (int64_t d = 0; d < g.dim(); ++d)
      if (d < lead || (shape[static_cast<size_t>(d - lead)] == 1 && g.size(d) != 1)) dims.push_back(d);
    if (!dims.empty()) g = sum(g, dims, true);
    g = g.reshape(shape);
  }
  return g.dtype() == dtype ? g : g.to(dtype);
}

// Note [Read-only memory]
// Another library may lend Locus memory it must not write (a DLPack import with the read-only
// flag: a NumPy array that is not writeable, a constant buffer). Locus has no read-only tensor
// type; the mark sits on the Storage, so every view of the memory carries it, and the one
// check below refuses the write before any kernel runs, since every write destination (the
// in-place and out= forms, copy_, fill_) passes through this function. Reads, views and copies
// out of the memory work as usual; data_ptr() hands out a raw pointer, which Locus cannot police.
void check_not_recording_into(const Tensor& t, std::string_view op) {
  if (t.impl()->storage()->read_only())
    throw ValueError("[locus::" + std::string(op) + "] cannot write into read-only memory (a tensor imported through DLPack " +
                     "with the read-only flag, which its producer does not allow writing); write into a copy: t.clone()");
  if (t_grad_enabled && t.requires_grad())
    throw ValueError(detail::error_prefix(op) + "writes into a tensor that requires grad, which autograd cannot " +
                     "record; use the out-of-place form, or wrap the update in NoGradGuard (as optimizers do)");
}

}  // namespace autograd

void Tensor::backward(const Tensor& gradient) const {
  if (!requires_grad())
    throw ValueError("backward: the tensor does not require grad and has no grad_fn (did an input have "
                     "requires_grad set, and was grad mode on?)");
  Tensor seed = gradient;
  if (!seed.defined()) {
    if (numel() != 1)
      throw ValueError("backward: grad can be implicitly created only for one-element outputs; this one has " +
                       std::to_string(numel()) + " elements, so pass a gradient of shape matching it");
    seed = ones_like(*this);
  } else if (seed.device() != device()) {  // the device rule first, as for every op
    throw DeviceMismatchError(device(), seed.device(), "gradient", "backward");
  } else if (!(seed.shape() == shape())) {
    std::ostringstream os;
    os << "[locus::backward] the gradient's shape " << seed.shape() << " does not match the tensor's " << shape();
    throw ShapeError(os.str());
  }
  NoGradGuard no_grad;
  const ops::AutocastExclusion no_autocast;  // backward ops run in the dtypes forward chose
  std::shared_ptr<autograd::Node> root = impl()->grad_fn();
  if (!root) root = std::make_shared<autograd::AccumulateGrad>(detail::intrusive_ptr<detail::TensorImpl>(impl()));
  // Dependencies: edges into each node from nodes reachable from the root.
  std::unordered_map<autograd::Node*, int> deps;
  std::vector<autograd::Node*> stack{root.get()};
  deps[root.get()] = 0;
  while (!stack.empty()) {
    autograd::Node* n = stack.back();
    stack.pop_back();
    for (const auto& next : n->next) {
      if (!next) continue;
      if (deps.emplace(next.get(), 0).second) stack.push_back(next.get());
      ++deps[next.get()];
    }
  }
  std::unordered_map<autograd::Node*, Tensor> pending{{root.get(), seed.detach()}};
  std::vector<autograd::Node*> ready{root.get()};
  while (!ready.empty()) {
    autograd::Node* n = ready.back();
    ready.pop_back();
    const Tensor grad = std::move(pending[n]);
    pending.erase(n);
    // No gradient reached this node (every path to it was cut): nothing flows on from it.
    const std::vector<Tensor> grads = grad.defined() ? n->apply(grad) : std::vector<Tensor>();
    for (size_t i = 0; i < n->next.size(); ++i) {
      autograd::Node* next = n->next[i].get();
      if (!next) continue;
      if (i < grads.size() && grads[i].defined()) {
        Tensor& slot = pending[next];
        slot = slot.defined() ? locus::add(slot, grads[i]) : grads[i];
      }
      if (--deps[next] == 0) ready.push_back(next);
    }
  }
}

Tensor Tensor::grad() const {
  const auto& g = impl()->grad();
  return g ? Tensor(g) : Tensor();
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined() && (!(g.shape() == shape()) || g.device() != device()))
    throw ValueError("set_grad: the gradient must have the tensor's shape and device");
  impl()->set_grad(g.defined() ? detail::intrusive_ptr<detail::TensorImpl>(g.impl()) : detail::intrusive_ptr<detail::TensorImpl>());
}

bool Tensor::is_leaf() const { return !impl()->grad_fn(); }

uint64_t Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
  if (!requires_grad() || !is_leaf())
    throw ValueError("register_post_accumulate_grad_hook: only leaves that require grad accumulate gradients");
  static std::atomic<uint64_t> next_id{1};
  auto hooks = impl()->grad_hooks() ? impl()->grad_hooks() : std::make_shared<autograd::GradHooks>();
  const uint64_t id = next_id.fetch_add(1, std::memory_order_relaxed);
  hooks->hooks.emplace_back(id, std::move(hook));
  impl()->set_grad_hooks(std::move(hooks));
  return id;
}

void Tensor::remove_post_accumulate_grad_hook(uint64_t id) const {
  const auto& hooks = impl()->grad_hooks();
  if (!hooks) return;
  std::erase_if(hooks->hooks, [id](const auto& entry) { return entry.first == id; });
}

void Tensor::set_data(const Tensor& src) const {
  if (src.impl() == impl()) return;
  impl()->set_data_from(*src.impl());
}

}  // namespace locus
