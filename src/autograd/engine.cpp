// Note [Autograd]
// Ops record a graph while grad mode is on and an input requires grad: the output's grad_fn is
// a Node whose next_functions() are edges (node, input number) to the producers of its inputs,
// or to an AccumulateGrad for a leaf. A pass over the graph (run_graph) first finds every node
// reachable from the roots and counts the edges into each, then orders them so that each node
// runs once, after all its consumers have handed it their gradients (summed per input). On its
// way it runs the hooks on each gradient (Node pre-hooks for non-leaf tensors, the leaf's own
// hooks before accumulation), keeps the gradients autograd::grad asked for, and frees each
// node's saved tensors after it ran unless the graph is retained. backward() accumulates into
// the leaves; autograd::grad() only collects, and runs only the nodes that lead to its inputs.
// Without create_graph the pass runs with recording off, so it builds no graph; with it, the
// nodes record their backward (Note [Double backward] in node.cpp). Each gradient stays on the
// device of the tensor it belongs to: the backward of to() copies it back to where the input
// lived, so a graph that crosses devices back-propagates.

#include "src/autograd/engine.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"

namespace locus {
namespace {
thread_local bool t_grad_enabled = true;
}

bool is_grad_enabled() noexcept { return t_grad_enabled; }
void set_grad_enabled(bool enabled) noexcept { t_grad_enabled = enabled; }

namespace autograd {
namespace {

// Where autograd::grad collects: non-leaf inputs by (grad_fn, output number), leaves by their
// impl (each use of a leaf has its own AccumulateGrad node).
class Captures {
 public:
  explicit Captures(const std::vector<Tensor>& inputs) : grads_(inputs.size()) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      if (t.impl()->grad_fn()) {
        (void)gradient_edge(t);  // a view first gets its current history
        by_edge_[{t.impl()->grad_fn().get(), t.impl()->output_nr()}] = i;
        nodes_.insert(t.impl()->grad_fn().get());
      } else {
        by_leaf_[t.impl()] = i;
      }
    }
  }
  bool empty() const noexcept { return grads_.empty(); }
  // True when `n` is where some input's gradient arrives.
  bool is_target(Node* n) const {
    if (nodes_.count(n)) return true;
    const auto* acc = dynamic_cast<const AccumulateGrad*>(n);
    return acc && by_leaf_.count(acc->leaf());
  }
  // Keeps `g` when (n, nr) is an input's edge.
  void offer(Node* n, uint32_t nr, const Tensor& g) {
    if (grads_.empty()) return;  // backward() without inputs collects nothing
    size_t index;
    if (const auto it = by_edge_.find({n, nr}); it != by_edge_.end()) index = it->second;
    else if (const auto* acc = dynamic_cast<const AccumulateGrad*>(n); acc && by_leaf_.count(acc->leaf()))
      index = by_leaf_.at(acc->leaf());
    else return;
    Tensor& slot = grads_[index];
    slot = slot.defined() ? add(slot, g) : g;
  }
  std::vector<Tensor> take() { return std::move(grads_); }

 private:
  std::map<std::pair<const Node*, uint32_t>, size_t> by_edge_;
  std::unordered_set<const Node*> nodes_;
  std::unordered_map<const detail::TensorImpl*, size_t> by_leaf_;
  std::vector<Tensor> grads_;
};

// The gradient for a leaf after its hooks (Tensor::register_hook on a leaf).
Tensor run_leaf_hooks(const AccumulateGrad& acc, Tensor g) {
  const auto& meta = acc.variable().impl()->autograd_meta();
  if (!meta || meta->leaf_hooks.empty()) return g;
  for (const auto& [id, hook] : std::vector(meta->leaf_hooks)) {  // a copy: a hook may remove itself
    Tensor replaced = hook(g);
    if (replaced.defined()) g = std::move(replaced);
  }
  return g;
}

// The order the nodes run in: each after every node with an edge into it (Kahn's algorithm
// over the edges reachable from the roots; `stop` nodes are reached but not looked past).
std::vector<Node*> running_order(const std::vector<Node*>& roots, const Captures& captures, bool stop_at_targets) {
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  for (Node* r : roots)
    if (deps.emplace(r, 0).second) stack.push_back(r);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (stop_at_targets && captures.is_target(n)) continue;
    for (const Edge& e : n->next_functions()) {
      if (!e.is_valid()) continue;
      if (deps.emplace(e.function.get(), 0).second) stack.push_back(e.function.get());
      ++deps[e.function.get()];
    }
  }
  std::vector<Node*> order, ready;
  for (Node* r : roots)
    if (deps[r] == 0 && std::find(ready.begin(), ready.end(), r) == ready.end()) ready.push_back(r);
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    order.push_back(n);
    if (stop_at_targets && captures.is_target(n)) continue;
    for (const Edge& e : n->next_functions())
      if (e.is_valid() && --deps[e.function.get()] == 0) ready.push_back(e.function.get());
  }
  return order;
}

}  // namespace

std::vector<Tensor> run_graph(const std::vector<Tensor>& roots, const std::vector<Tensor>& seeds, const GraphRun& run) {
  const bool saved_mode = is_grad_enabled();
  set_grad_enabled(run.create_graph);
  struct Restore {
    bool mode;
    ~Restore() { set_grad_enabled(mode); }
  } restore{saved_mode};
  const ops::AutocastExclusion no_autocast;  // backward ops run in the dtypes forward chose
  Captures captures(run.inputs);

  // The roots' edges, and a gradient buffer per node (one slot per forward output).
  std::vector<Edge> root_edges;
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  auto deliver = [&buffers](const Edge& e, const Tensor& g) {
    std::vector<Tensor>& buffer = buffers[e.function.get()];
    if (buffer.empty()) buffer.resize(e.function->num_inputs());
    Tensor& slot = buffer[e.input_nr];
    slot = slot.defined() ? add(slot, g) : g;
  };
  std::vector<Node*> root_nodes;
  for (size_t i = 0; i < roots.size(); ++i) {
    root_edges.push_back(gradient_edge(roots[i]));
    root_nodes.push_back(root_edges.back().function.get());
    deliver(root_edges.back(), seeds[i]);
  }
  const std::vector<Node*> order = running_order(root_nodes, captures, run.stop_at_inputs);

  // With inputs to collect, only the nodes that lead to one of them run.
  std::unordered_set<Node*> needed;
  if (!captures.empty()) {
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* n = *it;
      bool leads = captures.is_target(n);
      if (!(run.stop_at_inputs && leads))
        for (const Edge& e : n->next_functions()) leads = leads || (e.is_valid() && needed.count(e.function.get()));
      if (leads) needed.insert(n);
    }
  }

  for (Node* n : order) {
    const auto found = buffers.find(n);
    if (found == buffers.end()) continue;  // no gradient reached it (every path to it was cut)
    std::vector<Tensor> grads = std::move(found->second);
    buffers.erase(found);
    if (auto* acc = dynamic_cast<AccumulateGrad*>(n)) {
      if (!grads[0].defined()) continue;
      const Tensor g = run_leaf_hooks(*acc, grads[0]);
      captures.offer(n, 0, g);
      if (run.accumulate) acc->apply({g});
      continue;
    }
    bool any = false;
    for (uint32_t nr = 0; nr < grads.size(); ++nr) {
      if (!grads[nr].defined()) continue;
      any = true;
      grads[nr] = n->run_pre_hooks(nr, std::move(grads[nr]));
      captures.offer(n, nr, grads[nr]);
    }
    if (!any || (!captures.empty() && !needed.count(n)) || (run.stop_at_inputs && captures.is_target(n))) continue;
    const std::vector<Tensor> out = n->apply(std::move(grads));
    if (!run.keep_graph) n->release_variables();
    const edge_list& next = n->next_functions();
    for (size_t i = 0; i < next.size() && i < out.size(); ++i) {
      if (!next[i].is_valid() || !out[i].defined()) continue;
      if (!captures.empty() && !needed.count(next[i].function.get())) continue;
      deliver(next[i], out[i]);
    }
  }
  return captures.take();
}

std::vector<Tensor> differentiate_recomputed(const Tensor& out, const std::vector<Tensor>& inputs, const Tensor& grad) {
  std::vector<Tensor> targets;
  std::vector<size_t> where;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) targets.push_back(inputs[i]), where.push_back(i);
  std::vector<Tensor> grads(inputs.size());
  if (targets.empty() || !out.requires_grad()) return grads;
  // The recomputed forward stays: the gradients' own history runs back through it.
  GraphRun run;
  run.keep_graph = true;
  run.create_graph = true;
  run.accumulate = false;
  run.inputs = targets;
  run.stop_at_inputs = true;
  const std::vector<Tensor> got = run_graph({out}, {grad}, run);
  for (size_t k = 0; k < where.size(); ++k) grads[where[k]] = got[k];
  return grads;
}

namespace {

// The gradient each root starts from: `given`, checked against the root, or ones for a
// one-element root.
Tensor seed_for(const Tensor& root, const Tensor& given, const char* op) {
  if (!given.defined()) {
    if (root.numel() != 1)
      throw ValueError(std::string(op) + ": grad can be implicitly created only for one-element outputs; this one has " +
                       std::to_string(root.numel()) + " elements, so pass a gradient of shape matching it");
    return ones_like(root);
  }
  if (given.device() != root.device()) throw DeviceMismatchError(root.device(), given.device(), "gradient", op);
  if (!(given.shape() == root.shape())) {
    std::ostringstream os;
    os << "[locus::" << op << "] the gradient's shape " << given.shape() << " does not match the tensor's " << root.shape();
    throw ShapeError(os.str());
  }
  return given;
}

void check_roots(const std::vector<Tensor>& roots, const std::vector<Tensor>& seeds, const char* op) {
  if (!seeds.empty() && seeds.size() != roots.size())
    throw ValueError(std::string("[locus::") + op + "] got " + std::to_string(seeds.size()) + " gradients for " +
                     std::to_string(roots.size()) + " tensors");
  for (size_t i = 0; i < roots.size(); ++i)
    if (!roots[i].defined() || !roots[i].requires_grad())
      throw ValueError(std::string("[locus::") + op + "] element " + std::to_string(i) +
                       " of tensors does not require grad and does not have a grad_fn");
}

std::vector<Tensor> seeds_of(const std::vector<Tensor>& roots, const std::vector<Tensor>& given, const char* op,
                             bool create_graph) {
  std::vector<Tensor> seeds;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor s = seed_for(roots[i], i < given.size() ? given[i] : Tensor(), op);
    seeds.push_back(create_graph ? s : s.detach());
  }
  return seeds;
}

// backward() into the grad() of `inputs` only: their gradients are collected, then added.
void accumulate_into(const std::vector<Tensor>& inputs, const std::vector<Tensor>& grads, bool create_graph) {
  const AutoGradMode mode(create_graph);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (grads[i].defined()) AccumulateGrad(detail::intrusive_ptr<detail::TensorImpl>(inputs[i].impl())).apply({grads[i]});
}

}  // namespace

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  check_roots(outputs, grad_outputs, "grad");
  for (const Tensor& t : inputs)
    if (!t.defined() || !t.requires_grad())
      throw ValueError("[locus::grad] one of the differentiated tensors does not require grad");
  GraphRun run;
  run.keep_graph = retain_graph.value_or(create_graph);
  run.create_graph = create_graph;
  run.accumulate = false;
  run.inputs = inputs;
  std::vector<Tensor> result = run_graph(outputs, seeds_of(outputs, grad_outputs, "grad", create_graph), run);
  for (const Tensor& g : result)
    if (!g.defined() && !allow_unused)
      throw ValueError("[locus::grad] one of the differentiated tensors appears to not have been used in the graph; "
                       "pass allow_unused=true if this is what you want");
  return result;
}

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  check_roots(tensors, grad_tensors, "backward");
  GraphRun run;
  run.keep_graph = retain_graph.value_or(create_graph);
  run.create_graph = create_graph;
  run.accumulate = inputs.empty();
  run.inputs = inputs;
  const std::vector<Tensor> got = run_graph(tensors, seeds_of(tensors, grad_tensors, "backward", create_graph), run);
  if (!inputs.empty()) accumulate_into(inputs, got, create_graph);
}

}  // namespace autograd

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<std::vector<Tensor>> inputs) const {
  if (!requires_grad())
    throw ValueError("backward: the tensor does not require grad and has no grad_fn (did an input have "
                     "requires_grad set, and was grad mode on?)");
  autograd::backward({*this}, {gradient}, retain_graph, create_graph, inputs.value_or(std::vector<Tensor>()));
}

}  // namespace locus
