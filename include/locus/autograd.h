#pragma once
/// \file autograd.h
/// Gradient mode (torch.no_grad, torch.set_grad_enabled). Tensor::backward() and grad() are in
/// tensor.h.

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

}  // namespace locus
