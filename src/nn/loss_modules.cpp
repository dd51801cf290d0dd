// The loss modules: each forwards to its function with the options it was built with.

#include "locus/nn/loss_modules.h"

namespace locus::nn {

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(input, target, options_);
}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) { return nll_loss(input, target, options_); }

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return mse_loss(input, target, options_.reduction());
}

}  // namespace locus::nn
