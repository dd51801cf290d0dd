#pragma once
/// \file attention.h
/// Scaled dot-product attention, as PyTorch 2.x's F.scaled_dot_product_attention and LibTorch's
/// torch::scaled_dot_product_attention.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>

#include "locus/tensor.h"

namespace locus {

/// softmax(query key^T * scale + bias) value over query [..., L, E], key [..., S, E] and value
/// [..., S, Ev] (leading dims broadcast), as PyTorch 2.x defines it: scale defaults to
/// 1 / sqrt(E); a bool attn_mask (broadcasting to [..., L, S]) marks with true the keys that take
/// part, a floating one is added to the scores; is_causal masks the keys after each query (the
/// upper triangle of [L, S], aligned at the top left, as PyTorch's); dropout_p > 0 drops attention
/// weights (always, as F.scaled_dot_product_attention does: pass 0 in evaluation). A query whose
/// keys are all masked gets NaN, as PyTorch's math path. ValueError for attn_mask with
/// is_causal or dropout_p outside [0, 1]; ShapeError for operands of fewer than 2 dims, E or S
/// that differ between the operands, or a mask that does not broadcast. Differentiable in query,
/// key, value and a floating attn_mask. Computed as the composition (products, softmax,
/// products); the fused kernels are to come.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

namespace nn::functional {
/// F.scaled_dot_product_attention's spelling of locus::scaled_dot_product_attention.
using locus::scaled_dot_product_attention;
}  // namespace nn::functional

}  // namespace locus

LOCUS_API_END
