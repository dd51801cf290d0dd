#pragma once
/// \file multihead_attention.h
/// nn::MultiheadAttention with PyTorch's state_dict names: in_proj_weight (or q_proj_weight,
/// k_proj_weight, v_proj_weight when kdim or vdim differ from embed_dim), in_proj_bias, bias_k,
/// bias_v, out_proj.weight, out_proj.bias.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "locus/arg.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/layers.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// Options of nn::MultiheadAttention: `MultiheadAttentionOptions(128, 4).dropout(0.1)`.
struct MultiheadAttentionOptions {
  /// The model's width and the number of heads (which divides it).
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  /// The model's width E.
  LOCUS_ARG(int64_t, embed_dim);
  /// The number of heads; each attends over E / num_heads features.
  LOCUS_ARG(int64_t, num_heads);
  /// Dropout on the attention weights, in training mode.
  LOCUS_ARG(double, dropout) = 0.0;
  /// Biases of the input and output projections.
  LOCUS_ARG(bool, bias) = true;
  /// Learnable bias_k and bias_v [1, 1, E] appended to the keys and values.
  LOCUS_ARG(bool, add_bias_kv) = false;
  /// A zero key and value appended (after the heads are split).
  LOCUS_ARG(bool, add_zero_attn) = false;
  /// The keys' features (default embed_dim).
  LOCUS_ARG(std::optional<int64_t>, kdim) = std::nullopt;
  /// The values' features (default embed_dim).
  LOCUS_ARG(std::optional<int64_t>, vdim) = std::nullopt;
  /// Inputs and output [N, L, E] (PyTorch's Python option) instead of LibTorch's [L, N, E].
  LOCUS_ARG(bool, batch_first) = false;
};

/// Multi-head attention as PyTorch 1.13's nn.MultiheadAttention: query [L, N, E] (or [N, L, E]
/// with batch_first, or unbatched [L, E]), key [S, N, kdim], value [S, N, vdim]. Masks have
/// PyTorch's polarity: a bool attn_mask ([L, S] or [N * num_heads, L, S]) and key_padding_mask
/// ([N, S]) are true where a key must NOT be attended (the opposite of
/// scaled_dot_product_attention's); float masks are added. ValueError at construction when
/// num_heads does not divide embed_dim.
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  /// A layer with `options`.
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  /// `nn::MultiheadAttention(embed_dim, num_heads)`.
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  /// The attention output (query's layout, E features) and, with need_weights, the attention
  /// weights [N, L, S] averaged over the heads (or [N, num_heads, L, S] without
  /// average_attn_weights); undefined otherwise. ShapeError for masks of other shapes.
  /// is_causal (PyTorch 2.x's hint) says that attn_mask is the causal mask, or stands for it when
  /// attn_mask is undefined. Without need_weights the heads' attention is
  /// scaled_dot_product_attention, which may take a fused path (Note [Attention paths]).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  /// Registers the projections (and bias_k, bias_v).
  void reset() override;
  /// PyTorch's initialisation: xavier_uniform_ projections, zero biases, xavier_normal_ bias_k
  /// and bias_v, out_proj's weight as Linear's.
  void reset_parameters();
  /// The options the layer was built with.
  MultiheadAttentionOptions options;
  /// [3E, E] packed q/k/v projection (undefined when kdim or vdim differ from E).
  Tensor in_proj_weight;
  /// Separate projections [E, E], [E, kdim], [E, vdim] (defined only when kdim or vdim differ).
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;
  /// [3E] (undefined without bias).
  Tensor in_proj_bias;
  /// [1, 1, E] (defined with add_bias_kv).
  Tensor bias_k, bias_v;
  /// The output projection.
  Linear out_proj{nullptr};

 private:
  bool same_dims() const;
};
LOCUS_MODULE(MultiheadAttention);

}  // namespace locus::nn

LOCUS_API_END
