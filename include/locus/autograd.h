#pragma once
/// \file autograd.h
/// Gradient mode (torch.no_grad, torch.set_grad_enabled). Tensor::backward() and grad() are in
/// tensor.h.

#include "locus/export.h"
LOCUS_API_BEGIN

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

}  // namespace locus

LOCUS_API_END
