// Note [In-place ops in the graph]
// `y.mul_(2)`, `h.relu_()`, `out += identity` on tensors in the graph are recorded, as PyTorch
// does. record_in_place computes the op out of place (so its node and formula are the op's
// own: MulBackward0 for mul_), writes the result into self under NoGradGuard (the write adds
// one to the buffer's version), and makes the result's history self's. Two things keep it
// exact:
//   - The op's own node may have saved self's old values (mul_ by a tensor reads self for the
//     other operand's gradient); those are the values about to be overwritten, so every node
//     the op made gets a copy of them first (FunctionNode::unalias). An older node that saved
//     them is not rescued: the version check stops its backward with PyTorch's message.
//   - PyTorch's refusals: in-place on a leaf that requires grad, or on a view of one, while
//     recording ("a leaf Variable that requires grad is being used in an in-place operation").
//
// Note [Views and in-place ops]
// Every view op marks its result as a view of a base (the first tensor of a chain of views,
// which shares the buffer). An in-place op on a view changes its base too, so the base's
// history is rebased: its new grad_fn is a CopySlices node that sends the base's gradient
// outside the view to the base's old history and the part inside the view to the op's result
// (whose own history leads, through the view's old grad_fn, to the base's old history for the
// part the op read). Views of the base made before (siblings, and this view itself) then have
// a stale grad_fn; each remembers the base's grad_fn it was made against, and gradient_edge()
// gives a view whose base moved on a new AsStridedBackward0 node that reads its gradient out of
// the base's current history. Both nodes find the view's elements in the base by their places
// in the shared buffer, so any view geometry works, including views of views.

#include "src/autograd/in_place.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"

namespace locus::autograd {
namespace {

struct Geometry {
  Shape sizes, strides;
  int64_t offset;
  explicit Geometry(const detail::TensorImpl& t) : sizes(t.sizes()), strides(t.strides()), offset(t.offset()) {}
};

// The buffer position of each element of `g`, in row-major order.
std::vector<int64_t> positions(const Geometry& g) {
  const int64_t n = g.sizes.numel();
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  std::vector<int64_t> index(g.sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t p = g.offset;
    for (size_t d = 0; d < index.size(); ++d) p += index[d] * g.strides[d];
    out.push_back(p);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < g.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Where a view's elements are in its base (which does not overlap itself: it owns its
// elements): for each element of the view, its row-major index in the base; and a mask of the
// base's shape, true at the view's elements.
struct ViewPlaces {
  Tensor index, inside;
};

ViewPlaces view_places(const Geometry& base, const Geometry& view, Device device) {
  const std::vector<int64_t> base_pos = positions(base);
  std::unordered_map<int64_t, int64_t> where;
  where.reserve(base_pos.size());
  for (size_t i = 0; i < base_pos.size(); ++i) where.emplace(base_pos[i], static_cast<int64_t>(i));
  const std::vector<int64_t> view_pos = positions(view);
  std::vector<int64_t> index;
  index.reserve(view_pos.size());
  std::vector<uint8_t> inside(base_pos.size(), 0);
  for (const int64_t p : view_pos) {
    const auto found = where.find(p);
    if (found == where.end())
      throw ValueError("[locus::backward] a view reaches elements outside its base (made with as_strided?); autograd "
                       "cannot map its gradient back");
    index.push_back(found->second);
    inside[static_cast<size_t>(found->second)] = 1;
  }
  const TensorOptions host;
  return {tensor(index, host.dtype(DType::Int64)).to(device),
          tensor(inside, base.sizes, host.dtype(DType::UInt8)).to(device, DType::Bool)};
}

// PyTorch's node name for an in-place op whose result has no history of its own (fill_ ->
// FillBackward0, zero_ -> ZeroBackward0).
const char* history_free_name(std::string_view op) {
  static thread_local std::string name;
  name.clear();
  bool upper = true;
  for (const char c : op) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  name += "Backward0";
  // Names live as long as the process: one per op kind, interned.
  static std::unordered_map<std::string, std::unique_ptr<std::string>> interned;
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& slot = interned[name];
  if (!slot) slot = std::make_unique<std::string>(name);
  return slot->c_str();
}

// Gives every node made since `first` (the in-place op's own) a copy of the saved values that
// share `storage`, which is about to be overwritten.
void unalias_new_nodes(const Tensor& result, uint64_t first, const detail::Storage* storage) {
  std::vector<Node*> stack;
  if (result.impl()->grad_fn()) stack.push_back(result.impl()->grad_fn().get());
  std::vector<Node*> seen;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    auto* fn = dynamic_cast<FunctionNode*>(n);
    if (!fn || fn->sequence() < first || std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    fn->unalias(storage);
    for (const Edge& e : n->next_functions())
      if (e.is_valid()) stack.push_back(e.function.get());
  }
}

// The base's new history after `result` was written into its view `view` (Note [Views and
// in-place ops]).
void rebase_through_view(const Tensor& view, const Tensor& result) {
  const Tensor base(view.impl()->view_base());
  const Geometry base_geometry(*base.impl()), view_geometry(*view.impl());
  const Shape view_shape = view.shape();
  const DType view_dtype = view.dtype();
  record(base, "CopySlices", [=](const Tensor& g) -> std::vector<Tensor> {
    const ViewPlaces places = view_places(base_geometry, view_geometry, g.device());
    const Tensor rest = masked_fill(g, places.inside, 0);
    Tensor in_view = index_select(g.reshape({-1}), 0, places.index).view(view_shape);
    if (in_view.dtype() != view_dtype) in_view = in_view.to(view_dtype);
    return {rest, in_view};
  }, {&base, &result});
  refresh_view_history(view);
}

}  // namespace

void refresh_view_history(const Tensor& view) {
  detail::TensorImpl* impl = view.impl();
  const Tensor base(impl->view_base());
  const Geometry base_geometry(*base.impl()), view_geometry(*impl);
  const Shape base_shape = base.shape();
  auto node = std::make_shared<FunctionNode>("AsStridedBackward0", [=](const Tensor& g) -> std::vector<Tensor> {
    const Tensor index = view_places(base_geometry, view_geometry, g.device()).index;
    const Tensor flat = zeros({base_shape.numel()}, TensorOptions().dtype(g.dtype()).device(g.device()));
    return {index_add(flat, 0, index, g.reshape({-1})).view(base_shape)};
  });
  node->add_next_edge(gradient_edge(base));
  impl->set_grad_fn(std::move(node), 0);
  impl->set_requires_grad(true);
  impl->set_view_base_fn(base.impl()->grad_fn());
}

void mark_view(const Tensor& base, const Tensor& view) {
  if (view.impl() == base.impl()) return;
  detail::TensorImpl* b = base.impl();
  const detail::intrusive_ptr<detail::TensorImpl> root = b->view_base() ? b->view_base() : detail::intrusive_ptr<detail::TensorImpl>(b);
  view.impl()->set_view_base(root, root->grad_fn());
}

bool in_place_records(const Tensor& self, std::string_view op, std::initializer_list<const Tensor*> others) {
  if (!is_grad_enabled()) return false;
  bool any = self.requires_grad();
  for (const Tensor* t : others) any = any || (t->defined() && t->requires_grad());
  if (!any) return false;
  const auto& base = self.impl()->view_base();
  if (base && base->requires_grad() && !base->grad_fn())
    throw ValueError(detail::error_prefix(op) + "a view of a leaf Variable that requires grad is being used in an in-place "
                     "operation (write into a clone, or do it under NoGradGuard)");
  if (self.requires_grad() && self.is_leaf() && !base)
    throw ValueError(detail::error_prefix(op) + "a leaf Variable that requires grad is being used in an in-place "
                     "operation (write into a clone, or do it under NoGradGuard, as optimizers do)");
  return true;
}

bool record_in_place(const Tensor& self, std::string_view op, std::initializer_list<const Tensor*> others,
                     const std::function<Tensor()>& out_of_place) {
  if (!in_place_records(self, op, others)) return false;
  const auto& base = self.impl()->view_base();
  const uint64_t first = nodes_made();
  Tensor result = out_of_place();
  if (result.dtype() != self.dtype()) result = result.to(self.dtype());
  if (result.impl()->storage() == self.impl()->storage()) result = result.clone();
  unalias_new_nodes(result, first, self.impl()->storage().get());
  {
    NoGradGuard no_grad;
    Tensor(self).copy_(result);
  }
  if (!result.requires_grad()) {
    // No gradient flows from the new values (fill_, zero_): self's history ends here.
    record(result, history_free_name(op), [](const Tensor&) { return std::vector<Tensor>(); },
           std::initializer_list<const Tensor*>{});
  }
  if (base) {
    rebase_through_view(self, result);
  } else {
    self.impl()->set_grad_fn(result.impl()->grad_fn(), result.impl()->output_nr());
    self.impl()->set_requires_grad(true);
  }
  return true;
}

}  // namespace locus::autograd
