#pragma once
/// \file transformer_layer.h
/// nn::TransformerEncoderLayer and nn::TransformerDecoderLayer as PyTorch's, with its
/// state_dict names: self_attn.* (and multihead_attn.* in the decoder), linear1.*, linear2.*,
/// norm1.*, norm2.* (norm3.*).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <functional>
#include <string>

#include "locus/arg.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/layer_norm.h"
#include "locus/nn/layers.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/multihead_attention.h"

namespace locus::nn {

/// The feed-forward block's activation: ReLU, GELU or any function, converting from `nn::kReLU`
/// and `nn::kGELU` (LibTorch's torch::kReLU, torch::kGELU), from PyTorch's strings "relu" and
/// "gelu" (ValueError for another string) and from a `std::function<Tensor(const Tensor&)>`.
struct TransformerActivation {
  /// Which one.
  enum Kind { ReLU, GELU, Custom };
  /// ReLU or GELU.
  TransformerActivation(Kind which) : kind(which) {}  // NOLINT: implicit, as LibTorch's variant
  /// "relu" or "gelu", PyTorch's Python spelling.
  TransformerActivation(const char* name);  // NOLINT: implicit, as PyTorch's string argument
  /// "relu" or "gelu".
  TransformerActivation(const std::string& name) : TransformerActivation(name.c_str()) {}  // NOLINT
  /// Any function of one tensor.
  TransformerActivation(std::function<Tensor(const Tensor&)> fn)  // NOLINT: implicit, as LibTorch's variant
      : kind(Custom), function(std::move(fn)) {}
  /// Applies it.
  Tensor operator()(const Tensor& x) const;
  /// Which one.
  Kind kind;
  /// The function of a Custom activation.
  std::function<Tensor(const Tensor&)> function;
};

/// LibTorch's torch::kReLU as a transformer activation.
inline constexpr TransformerActivation::Kind kReLU = TransformerActivation::ReLU;
/// LibTorch's torch::kGELU as a transformer activation.
inline constexpr TransformerActivation::Kind kGELU = TransformerActivation::GELU;

/// The options of both transformer layers, for the options `Derived` of one of them (written
/// once because they are the same; the setters return `Derived&`, LOCUS_DERIVED_ARG).
template <class Derived>
struct TransformerLayerOptionsBase {
  /// The model's width and the number of attention heads (which divides it).
  TransformerLayerOptionsBase(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  /// The model's width E.
  LOCUS_DERIVED_ARG(int64_t, d_model);
  /// Attention heads.
  LOCUS_DERIVED_ARG(int64_t, nhead);
  /// The feed-forward block's hidden width.
  LOCUS_DERIVED_ARG(int64_t, dim_feedforward) = 2048;
  /// Dropout on the attention weights, after each block and inside the feed-forward block.
  LOCUS_DERIVED_ARG(double, dropout) = 0.1;
  /// The feed-forward block's activation.
  LOCUS_DERIVED_ARG(TransformerActivation, activation) = kReLU;
  /// The layer norms' eps.
  LOCUS_DERIVED_ARG(double, layer_norm_eps) = 1e-5;
  /// Inputs [N, L, E] (PyTorch's Python option) instead of [L, N, E].
  LOCUS_DERIVED_ARG(bool, batch_first) = false;
  /// Pre-norm (x + block(norm(x))) instead of post-norm (norm(x + block(x))).
  LOCUS_DERIVED_ARG(bool, norm_first) = false;
};

/// Options of nn::TransformerEncoderLayer: `TransformerEncoderLayerOptions(512, 8).dropout(0.1)`.
struct TransformerEncoderLayerOptions : TransformerLayerOptionsBase<TransformerEncoderLayerOptions> {
  using TransformerLayerOptionsBase::TransformerLayerOptionsBase;
};

/// Options of nn::TransformerDecoderLayer, the encoder layer's.
struct TransformerDecoderLayerOptions : TransformerLayerOptionsBase<TransformerDecoderLayerOptions> {
  using TransformerLayerOptionsBase::TransformerLayerOptionsBase;
};

/// Self-attention and a feed-forward block, each with a residual connection and a layer norm
/// (after it, or before it with norm_first), as PyTorch's nn.TransformerEncoderLayer. Masks as
/// MultiheadAttention's: true (or -inf) where a key must not be attended. `is_causal` (PyTorch
/// 2.x's hint) says that src_mask is the causal mask, or stands for it when src_mask is
/// undefined; the attention can then skip the masked half (Note [Attention paths]).
class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  /// A layer with `options`.
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  /// `nn::TransformerEncoderLayer(d_model, nhead)`.
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  /// The layer's output, src's shape.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);
  /// Registers the submodules.
  void reset() override;
  /// Re-draws every submodule's parameters.
  void reset_parameters();
  /// The options the layer was built with.
  TransformerEncoderLayerOptions options;
  /// The self-attention.
  MultiheadAttention self_attn{nullptr};
  /// The feed-forward block: linear2(dropout(activation(linear1(x)))).
  Linear linear1{nullptr}, linear2{nullptr};
  /// Dropout inside the feed-forward block.
  Dropout dropout{nullptr};
  /// The layer norms of the two blocks.
  LayerNorm norm1{nullptr}, norm2{nullptr};
  /// Dropout after the attention block and after the feed-forward block.
  Dropout dropout1{nullptr}, dropout2{nullptr};
};
LOCUS_MODULE(TransformerEncoderLayer);

/// Self-attention, attention over the encoder's output (memory) and a feed-forward block, each
/// with a residual connection and a layer norm, as PyTorch's nn.TransformerDecoderLayer.
class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  /// A layer with `options`.
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);
  /// `nn::TransformerDecoderLayer(d_model, nhead)`.
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  /// The layer's output, tgt's shape. tgt_is_causal and memory_is_causal are is_causal's hints
  /// for tgt_mask and memory_mask.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool tgt_is_causal = false, bool memory_is_causal = false);
  /// Registers the submodules.
  void reset() override;
  /// Re-draws every submodule's parameters.
  void reset_parameters();
  /// The options the layer was built with.
  TransformerDecoderLayerOptions options;
  /// The self-attention and the attention over memory.
  MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  /// The feed-forward block.
  Linear linear1{nullptr}, linear2{nullptr};
  /// Dropout inside the feed-forward block.
  Dropout dropout{nullptr};
  /// The layer norms of the three blocks.
  LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
  /// Dropout after each block.
  Dropout dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};
};
LOCUS_MODULE(TransformerDecoderLayer);

}  // namespace locus::nn

LOCUS_API_END
