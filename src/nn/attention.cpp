// Scaled dot-product attention as PyTorch 2.x's math path: the scores' product, the mask added
// or filled in, softmax, dropout and the product with the values. Its gradient is the
// composition's. The fused kernels (a tiled online softmax on the CPU, cuDNN's on CUDA) are the
// next step of issue 27.

#include "locus/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/core/public_op.h"
#include "src/nn/python_repr.h"
#include "src/ops/public_op.h"

namespace locus {
namespace {

using detail::error_prefix;

std::string dims_text(const Tensor& t) { return nn::detail::shape_text(t.shape()); }

void check_operands(const Tensor& q, const Tensor& k, const Tensor& v) {
  const std::string prefix = error_prefix("scaled_dot_product_attention");
  for (const auto& [t, name] : {std::pair{&q, "query"}, std::pair{&k, "key"}, std::pair{&v, "value"}})
    if (t->dim() < 2)
      throw ShapeError(prefix + name + " must have at least 2 dims [..., length, features], got " + dims_text(*t));
  if (q.size(-1) != k.size(-1))
    throw ShapeError(prefix + "query and key must have the same number of features E, got query " + dims_text(q) +
                     " and key " + dims_text(k));
  if (k.size(-2) != v.size(-2))
    throw ShapeError(prefix + "key and value must have the same length S, got key " + dims_text(k) + " and value " +
                     dims_text(v));
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                                    double dropout_p, bool is_causal, std::optional<double> scale) {
  const ops::PublicOp op("scaled_dot_product_attention",
                         {{query, "query"}, {key, "key"}, {value, "value"}, {attn_mask, "attn_mask"}});
  const std::string prefix = error_prefix("scaled_dot_product_attention");
  check_operands(query, key, value);
  if (attn_mask.defined() && is_causal)
    throw ValueError(prefix + "attn_mask should not be set when is_causal=True (the causal mask is the mask)");
  if (!(dropout_p >= 0 && dropout_p <= 1))
    throw ValueError(prefix + "dropout_p must be between 0 and 1, got " + std::to_string(dropout_p));
  const int64_t length = query.size(-2), keys = key.size(-2);
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  Tensor scores = mul(matmul(query, key.transpose(-2, -1)), s);
  const double minus_inf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    // Key j is after query i where j > i: the upper triangle, aligned at the top left.
    const TensorOptions positions = TensorOptions().dtype(kInt64).device(query.device());
    const Tensor after = gt(arange(keys, positions).unsqueeze(0), arange(length, positions).unsqueeze(1));
    scores = masked_fill(scores, after, minus_inf);
  }
  if (attn_mask.defined()) {
    if (attn_mask.dtype() == kBool) scores = masked_fill(scores, logical_not(attn_mask), minus_inf);
    else scores = add(scores, attn_mask);
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0) weights = nn::dropout(weights, dropout_p, true);
  return matmul(weights, value);
}

}  // namespace locus
