// See train_mode_warning.h.

#include "src/nn/train_mode_warning.h"

#include <atomic>
#include <iostream>

#include "locus/autograd.h"

namespace locus::nn::detail {

void warn_if_training_without_grad(const char* layer) {
  static std::atomic<bool> warned{false};
  if (is_grad_enabled() || warned.exchange(true)) return;
  std::cerr << "Warning: " << layer
            << " runs in training mode with gradients off (NoGradGuard or InferenceMode): it updates its running "
               "statistics or drops activations. Call model->eval() before evaluating, or train() to silence this.\n";
}

}  // namespace locus::nn::detail
