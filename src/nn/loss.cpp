// Losses.

#include "locus/nn/loss.h"

#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"

namespace locus::nn {

Tensor mse_loss(const Tensor& input, const Tensor& target) {
  if (!(input.shape() == target.shape())) {
    std::ostringstream os;
    os << "[locus::mse_loss] input shape " << input.shape() << " and target shape " << target.shape() << " differ";
    throw ShapeError(os.str());
  }
  const Tensor d = sub(input, target);
  return mean(mul(d, d));
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target) {
  if (log_probs.dim() != 2 || target.dim() != 1 || target.size(0) != log_probs.size(0)) {
    std::ostringstream os;
    os << "[locus::nll_loss] expects log-probabilities [N, C] and targets [N], got " << log_probs.shape() << " and "
       << target.shape();
    throw ShapeError(os.str());
  }
  if (target.dtype() != kInt64 && target.dtype() != kInt32 && target.dtype() != kUInt8)
    throw DTypeError("[locus::nll_loss] targets must be class indices (int64), got " + std::string(dtype_name(target.dtype())));
  const int64_t n = log_probs.size(0), c = log_probs.size(1);
  Tensor picked;
  {
    NoGradGuard no_grad;
    const Tensor t = target.to(kInt64).view({n, 1});
    if (n > 0) {
      const int64_t lo = min(t).item<int64_t>(), hi = max(t).item<int64_t>();
      if (lo < 0 || hi >= c)
        throw IndexError("[locus::nll_loss] target " + std::to_string(lo < 0 ? lo : hi) + " is out of bounds for " +
                         std::to_string(c) + " classes");
    }
    // A one-hot mask picks log_probs[i, target[i]] with ops autograd already knows.
    picked = eq(arange(c, TensorOptions().device(log_probs.device())).view({1, c}), t).to(log_probs.dtype());
  }
  // The mean over an empty batch is 0/0 = NaN, as in PyTorch.
  return div(neg(sum(mul(log_probs, picked))), static_cast<double>(n));
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target) { return nll_loss(log_softmax(logits, 1), target); }

}  // namespace locus::nn
