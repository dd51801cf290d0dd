// F::margin_ranking_loss and F::cosine_embedding_loss: losses over pairs of inputs and a +-1
// target, in PyTorch 1.13's arithmetic.

#include <sstream>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/loss_common.h"
#include "src/ops/public_op.h"

namespace locus::nn::functional {

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  const ops::PublicOp op("margin_ranking_loss", {{input1, "input1"}, {input2, "input2"}, {target, "target"}},
                         ops::CpuScalars::Join);
  // PyTorch checks the dims itself, then lets the three broadcast (it is a pairwise loss: a
  // broadcast is a comparison the caller asked for, not a shape accident).
  if (input1.dim() != input2.dim() || input1.dim() != target.dim()) {
    std::ostringstream os;
    os << detail::error_prefix("margin_ranking_loss")
       << "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: " << input1.shape()
       << ", input2: " << input2.shape() << ", target: " << target.shape();
    throw ShapeError(os.str());
  }
  const Tensor losses = clamp(-target * (input1 - input2) + options.margin(), 0.0);
  return loss_checks::reduce_loss(losses, options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  const ops::PublicOp op("cosine_embedding_loss", {{input1, "input1"}, {input2, "input2"}, {target, "target"}});
  const int64_t target_dim = target.dim();
  auto fail = [&](const char* what) {
    std::ostringstream os;
    os << detail::error_prefix("cosine_embedding_loss") << what << ", but found inputs with sizes "
       << input1.shape() << " and " << input2.shape();
    throw ShapeError(os.str());
  };
  if (target_dim > 1)
    throw ShapeError(detail::error_prefix("cosine_embedding_loss") +
                     "0D or 1D target tensor expected, multi-target not supported");
  if (target_dim == 1 && (input1.dim() != 2 || input2.dim() != 2)) fail("1D target tensor expects 2D input tensors");
  if (target_dim == 0 && (input1.dim() != 1 || input2.dim() != 1)) fail("0D target tensor expects 1D input tensors");
  // PyTorch's formula: the squared norms get 1e-12 each before the product's root.
  constexpr double kEpsilon = 1e-12;
  const Tensor prod_sum = (input1 * input2).sum(target_dim);
  const Tensor mag_square1 = (input1 * input1).sum(target_dim) + kEpsilon;
  const Tensor mag_square2 = (input2 * input2).sum(target_dim) + kEpsilon;
  const Tensor cos = prod_sum / sqrt(mag_square1 * mag_square2);
  const Tensor zeros = zeros_like(cos);
  const Tensor pos = 1.0 - cos;
  const Tensor neg = clamp(cos - options.margin(), 0.0);
  const Tensor losses = where(target == 1, pos, zeros) + where(target == -1, neg, zeros);
  return loss_checks::reduce_loss(losses, options.reduction());
}

}  // namespace locus::nn::functional
