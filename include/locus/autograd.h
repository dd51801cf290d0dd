#pragma once
/// \file autograd.h
/// Gradient mode (torch.no_grad, torch.set_grad_enabled) and LibTorch's torch::autograd::grad
/// and backward. Tensor::backward(), grad(), grad_fn() and register_hook() are in tensor.h, the
/// graph's nodes in autograd/node.h, custom Functions in autograd/function.h.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>
#include <vector>

#include "locus/autograd/node.h"
#include "locus/tensor.h"

namespace locus {

/// True when ops record the graph for backward() on this thread (the default).
bool is_grad_enabled() noexcept;
/// Turns recording on or off for this thread.
void set_grad_enabled(bool enabled) noexcept;

/// RAII: no graph is recorded on this thread while it lives (`with torch.no_grad():`).
/// Results of ops do not require grad. Nests; restores the previous mode.
class NoGradGuard {
 public:
  NoGradGuard() noexcept : previous_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

/// RAII: grad mode set to `enabled` while it lives, then restored (LibTorch's AutoGradMode,
/// `with torch.set_grad_enabled(enabled):`).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) noexcept : previous_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(previous_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

/// RAII: LibTorch's InferenceMode (`with torch.inference_mode():`). In Locus it is NoGradGuard
/// under the name inference code reaches for: no graph is recorded, nothing is saved for a
/// backward pass. `InferenceMode guard(false)` leaves the mode as it is, as LibTorch's does.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true) noexcept : previous_(is_grad_enabled()) {
    if (enabled) set_grad_enabled(false);
  }
  ~InferenceMode() { set_grad_enabled(previous_); }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;

 private:
  bool previous_;
};

namespace autograd {

/// The gradients of the sum of `outputs` (each weighted by its entry of `grad_outputs`;
/// undefined or missing entries mean ones, for one-element outputs) with respect to each of
/// `inputs`, without touching any grad(). The graph's saved tensors are freed unless
/// `retain_graph` (default: `create_graph`); `create_graph` records the computation so the
/// result can be differentiated again (gradient penalties, Hessian-vector products). An input
/// the outputs do not depend on is a ValueError unless `allow_unused`, which gives an undefined
/// tensor for it. LibTorch's torch::autograd::grad.
variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs = {},
                   std::optional<bool> retain_graph = std::nullopt, bool create_graph = false, bool allow_unused = false);

/// Back-propagates from every tensor of `tensors` at once (weighted by `grad_tensors`, as
/// grad()), adding into the grad() of the leaves (of `inputs` only, when given). LibTorch's
/// torch::autograd::backward.
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false, const variable_list& inputs = {});

}  // namespace autograd

}  // namespace locus

LOCUS_API_END
