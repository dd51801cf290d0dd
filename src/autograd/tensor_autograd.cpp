// The Tensor methods of autograd: grad(), grad_fn(), hooks, retain_grad, set_data.

#include <memory>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/autograd/node.h"

namespace locus {

Tensor Tensor::grad() const {
  if (const auto& g = impl()->grad()) return Tensor(g);
  if (const auto& meta = impl()->autograd_meta(); meta && meta->retains_grad) return meta->retained;
  return Tensor();
}

void Tensor::set_grad(const Tensor& g) const {
  if (g.defined() && (!(g.shape() == shape()) || g.device() != device()))
    throw ValueError("set_grad: the gradient must have the tensor's shape and device");
  impl()->set_grad(g.defined() ? detail::intrusive_ptr<detail::TensorImpl>(g.impl()) : detail::intrusive_ptr<detail::TensorImpl>());
}

bool Tensor::is_leaf() const { return !impl()->grad_fn(); }

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  (void)autograd::gradient_edge(*this);  // a view whose base changed history gets its new grad_fn first
  return impl()->grad_fn();
}

void Tensor::retain_grad() const {
  if (!requires_grad()) throw ValueError("retain_grad: can't retain_grad on a tensor that has requires_grad=false");
  if (is_leaf()) return;  // leaves keep their gradient anyway
  autograd::AutogradMeta& meta = autograd::autograd_meta(*this);
  if (meta.retains_grad) return;
  meta.retains_grad = true;
  // The hook holds the meta weakly: the tensor holds its grad_fn, which holds the hook.
  const std::weak_ptr<autograd::AutogradMeta> weak = impl()->autograd_meta();
  grad_fn()->add_pre_hook(output_nr(), [weak](const Tensor& g) {
    if (const auto m = weak.lock()) {
      const Tensor value = is_grad_enabled() ? g : g.detach();
      m->retained = m->retained.defined() ? locus::add(m->retained, value) : value.clone();
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const {
  if (is_leaf()) return requires_grad();
  const auto& meta = impl()->autograd_meta();
  return meta && meta->retains_grad;
}

unsigned Tensor::register_gradient_hook(std::function<Tensor(const Tensor&)> hook) const {
  if (!requires_grad())
    throw ValueError("register_hook: cannot register a hook on a tensor that doesn't require gradient");
  if (is_leaf()) {
    const uint64_t id = autograd::next_hook_id();
    autograd::autograd_meta(*this).leaf_hooks.emplace_back(id, std::move(hook));
    return static_cast<unsigned>(id);
  }
  return static_cast<unsigned>(grad_fn()->add_pre_hook(output_nr(), std::move(hook)));
}

void Tensor::remove_hook(unsigned id) const {
  if (const auto& meta = impl()->autograd_meta())
    std::erase_if(meta->leaf_hooks, [id](const auto& entry) { return entry.first == id; });
  if (const auto& fn = impl()->grad_fn()) fn->remove_pre_hook(id);
}

uint64_t Tensor::register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const {
  if (!requires_grad() || !is_leaf())
    throw ValueError("register_post_accumulate_grad_hook: only leaves that require grad accumulate gradients");
  const uint64_t id = autograd::next_hook_id();
  autograd::autograd_meta(*this).post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

void Tensor::remove_post_accumulate_grad_hook(uint64_t id) const {
  const auto& meta = impl()->autograd_meta();
  if (!meta) return;
  std::erase_if(meta->post_accumulate_hooks, [id](const auto& entry) { return entry.first == id; });
}

void Tensor::set_data(const Tensor& src) const {
  if (src.impl() == impl()) return;
  impl()->set_data_from(*src.impl());
}

}  // namespace locus
