// The node kinds of the recorded graph and the recording API (src/autograd/node.h).

#include "src/autograd/node.h"

#include <algorithm>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/engine.h"
#include "src/autograd/in_place.h"
#include "src/core/public_op.h"

namespace locus::autograd {
namespace {

std::atomic<uint64_t> g_node_sequence{0};

// The gradient a node without a double backward hands on under create_graph: backward through
// it again says which node could not be differentiated twice (PyTorch's DelayedError).
class DoubleBackwardError final : public Node {
 public:
  explicit DoubleBackwardError(std::string op) : op_(std::move(op)) {}
  std::string name() const override { return "DelayedError"; }
  variable_list apply(variable_list&&) override {
    throw NotImplementedError("[locus::backward] double backward of " + op_ +
                              " is not supported: its backward is a fused kernel without a differentiable form "
                              "(docs/autograd.md lists the ops with second derivatives)");
  }

 private:
  std::string op_;
};

}  // namespace

// ---- Node -----------------------------------------------------------------------------------

Node::~Node() = default;

uint64_t Node::add_pre_hook(uint32_t nr, GradHook hook) {
  const uint64_t id = next_hook_id();
  pre_hooks_.emplace_back(id, nr, std::move(hook));
  return id;
}

void Node::remove_pre_hook(uint64_t id) {
  std::erase_if(pre_hooks_, [id](const auto& h) { return std::get<0>(h) == id; });
}

Tensor Node::run_pre_hooks(uint32_t nr, Tensor grad) const {
  if (pre_hooks_.empty()) return grad;
  for (const auto& [id, hook_nr, hook] : std::vector(pre_hooks_)) {  // a copy: a hook may remove itself
    if (hook_nr != nr) continue;
    Tensor replaced = hook(grad);
    if (replaced.defined()) grad = std::move(replaced);
  }
  return grad;
}

uint64_t nodes_made() noexcept { return g_node_sequence.load(std::memory_order_relaxed); }

uint64_t next_hook_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

AutogradMeta& autograd_meta(const Tensor& t) {
  if (!t.impl()->autograd_meta()) t.impl()->set_autograd_meta(std::make_shared<AutogradMeta>());
  return *t.impl()->autograd_meta();
}

// ---- FunctionNode ---------------------------------------------------------------------------

FunctionNode::FunctionNode(const char* name, Backward backward)
    : name_(name), backward_(std::move(backward)), sequence_(g_node_sequence.fetch_add(1, std::memory_order_relaxed)) {}

void FunctionNode::save(const Tensor& held, const Tensor& from, bool is_output, Edge edge) {
  saved_.emplace_back(held, from, is_output, std::move(edge));
}

void FunctionNode::recompute_with(const std::vector<Tensor>& inputs, Recompute recompute) {
  double_backward_ = DoubleBackward::Recompute;
  recompute_ = std::move(recompute);
  for (const Tensor& t : inputs) recompute_inputs_.emplace_back(t.defined() ? t.detach() : t, t, false);
}

void FunctionNode::release_variables() {
  if (saved_.empty() && recompute_inputs_.empty()) return;
  backward_ = nullptr;
  recompute_ = nullptr;
  saved_.clear();
  recompute_inputs_.clear();
  released_ = true;
}

void FunctionNode::unalias(const detail::Storage* storage) {
  for (SavedTensor& s : saved_) s.unalias(storage);
  for (SavedTensor& s : recompute_inputs_) s.unalias(storage);
}

void FunctionNode::check_versions() const {
  for (const SavedTensor& s : saved_) s.check_version(*this);
}

variable_list FunctionNode::apply(variable_list&& grads) {
  if (released_)
    throw ValueError("[locus::backward] trying to backward through the graph a second time (or to read saved tensors "
                     "after they were freed): " + std::string(name_) + "'s saved tensors were freed by the first "
                     "backward; pass retain_graph=true to the first backward() or autograd::grad() to run it twice");
  check_versions();
  const Tensor& grad = grads.empty() ? Tensor() : grads[0];
  if (!is_grad_enabled()) return backward_(grad);
  return apply_with_graph(grad);
}

// Note [Double backward]
// A backward with create_graph runs every node with grad mode on, so the gradients it makes
// are recorded and can be differentiated again. Each node does so by its kind:
//   Differentiable: the saved tensors are attached to their history (Note [Saved tensors]) and
//     the backward function runs; its ops record as any ops do.
//   Recompute: a fused kernel's backward records nothing, so the node recomputes its forward
//     through the composite path on its attached inputs and differentiates that, with
//     create_graph, stopping at the inputs (the outer backward carries the gradient on).
//   Unsupported: the backward runs without recording; each gradient it gives carries a
//     DoubleBackwardError node, so a backward that reaches it says which op it was (PyTorch's
//     DelayedError), instead of a silent zero.
std::vector<Tensor> FunctionNode::apply_with_graph(const Tensor& grad) {
  const std::shared_ptr<Node> self = shared_from_this();
  if (double_backward_ == DoubleBackward::Recompute) {
    std::vector<Tensor> inputs;
    for (const SavedTensor& s : recompute_inputs_) s.check_version(*this), inputs.push_back(s.tensor());
    const InputsAttached attached(recompute_inputs_, self);
    const Tensor out = recompute_(inputs);
    return differentiate_recomputed(out, inputs, grad);
  }
  if (double_backward_ == DoubleBackward::Unsupported) {
    std::vector<Tensor> grads;
    {
      NoGradGuard no_grad;
      grads = backward_(grad);
    }
    bool any_history = grad.requires_grad();
    for (const SavedTensor& s : saved_) any_history = any_history || s.requires_grad();
    if (!any_history) return grads;
    const auto error = std::make_shared<DoubleBackwardError>(name_);
    for (Tensor& g : grads)
      if (g.defined()) {
        g = g.detach();
        g.impl()->set_grad_fn(error, 0);
        g.impl()->set_requires_grad(true);
      }
    return grads;
  }
  const InputsAttached attached(saved_, self);
  return backward_(grad);
}

// ---- MultiOutputNode ------------------------------------------------------------------------

MultiOutputNode::MultiOutputNode(const char* name, Backward backward, const std::vector<Tensor>& outputs)
    : Node(static_cast<uint32_t>(outputs.size())), name_(name), backward_(std::move(backward)) {
  for (const Tensor& t : outputs) {
    shapes_.push_back(t.shape());
    options_.push_back(TensorOptions().dtype(t.dtype()).device(t.device()));
  }
}

variable_list MultiOutputNode::apply(variable_list&& grads) {
  grads.resize(shapes_.size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].defined()) grads[i] = zeros(shapes_[i], options_[i]);
  return backward_(grads);
}

// ---- AccumulateGrad -------------------------------------------------------------------------

variable_list AccumulateGrad::apply(variable_list&& grads) {
  Tensor g = grads.empty() ? Tensor() : grads[0];
  if (!g.defined()) return {};
  if (g.dtype() != leaf_->dtype()) g = g.to(leaf_->dtype());
  const bool keep_graph = is_grad_enabled();  // backward with create_graph: grad() keeps its history
  if (leaf_->grad()) {
    g = add(Tensor(leaf_->grad()), g);
  } else if (!keep_graph && g.impl()->storage()->use_count() > 1) {
    // The same buffer may also be another leaf's gradient (y = a + b hands both the same g):
    // each leaf owns its own, so changing one grad in place never changes another.
    g = g.clone();
  }
  leaf_->set_grad(detail::intrusive_ptr<detail::TensorImpl>((keep_graph ? g : g.detach()).impl()));
  if (const auto& meta = leaf_->autograd_meta(); meta && !meta->post_accumulate_hooks.empty()) {
    const Tensor leaf(leaf_);
    for (const auto& [id, hook] : std::vector(meta->post_accumulate_hooks)) hook(leaf);  // a hook may remove itself
  }
  return {};
}

// ---- recording ------------------------------------------------------------------------------

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  detail::TensorImpl* impl = t.impl();
  if (impl->view_base() && impl->grad_fn() && impl->view_base()->grad_fn() != impl->view_base_fn()) refresh_view_history(t);
  if (const auto& fn = impl->grad_fn()) return {fn, impl->output_nr()};
  return {std::make_shared<AccumulateGrad>(detail::intrusive_ptr<detail::TensorImpl>(impl)), 0};
}

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

namespace {

// `input_of(impl)`: the index of the input with that impl, or -1 (its edge is reused, so a
// saved leaf gets the node's own AccumulateGrad rather than a second one).
template <class InputOf>
FunctionNode& link(const Tensor& out, std::shared_ptr<FunctionNode> node, std::initializer_list<SaveFrom> saved, InputOf input_of) {
  for (const SaveFrom& s : saved) {
    if (!s.held.defined()) continue;
    const bool is_output = s.from.impl() == out.impl();
    const int i = is_output ? -1 : input_of(s.from.impl());
    node->save(s.held, s.from, is_output, i >= 0 ? node->next_functions()[static_cast<size_t>(i)] : Edge());
  }
  FunctionNode& ref = *node;
  out.impl()->set_grad_fn(std::move(node), 0);
  out.impl()->set_requires_grad(true);
  return ref;
}

}  // namespace

FunctionNode& record(const Tensor& out, const char* name, FunctionNode::Backward backward,
                     std::initializer_list<const Tensor*> inputs, std::initializer_list<SaveFrom> saved) {
  auto node = std::make_shared<FunctionNode>(name, std::move(backward));
  for (const Tensor* t : inputs) node->add_next_edge(gradient_edge(*t));
  return link(out, std::move(node), saved, [&inputs](const detail::TensorImpl* impl) {
    int i = 0;
    for (const Tensor* t : inputs) {
      if (t->defined() && t->impl() == impl) return i;
      ++i;
    }
    return -1;
  });
}

FunctionNode& record(const Tensor& out, const char* name, FunctionNode::Backward backward, const std::vector<Tensor>& inputs,
                     std::initializer_list<SaveFrom> saved) {
  auto node = std::make_shared<FunctionNode>(name, std::move(backward));
  for (const Tensor& t : inputs) node->add_next_edge(gradient_edge(t));
  return link(out, std::move(node), saved, [&inputs](const detail::TensorImpl* impl) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined() && inputs[i].impl() == impl) return static_cast<int>(i);
    return -1;
  });
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
void check_write(const Tensor& t, std::string_view op) {
  if (t.impl()->storage()->read_only())
    throw ValueError("[locus::" + std::string(op) + "] cannot write into read-only memory (a tensor imported through DLPack " +
                     "with the read-only flag, which its producer does not allow writing); write into a copy: t.clone()");
  // The in-place forms that autograd records never get here with grad mode on and a tensor
  // that requires grad (record_in_place took them); what does is an out= form or a write the
  // graph cannot express.
  if (is_grad_enabled() && t.requires_grad())
    throw ValueError(detail::error_prefix(op) + "writes into a tensor that requires grad, which autograd cannot " +
                     "record; use the out-of-place form, or wrap the update in NoGradGuard (as optimizers do)");
}

void prepare_write(const Tensor& t, std::string_view op) {
  check_write(t, op);
  t.impl()->storage()->bump_version();
}

}  // namespace locus::autograd
