// The encoder and decoder layers, block for block as PyTorch's nn.TransformerEncoderLayer and
// nn.TransformerDecoderLayer: _sa_block, _mha_block and _ff_block, with the residual and the
// norm around each (norm_first puts the norm before the block).

#include "locus/nn/transformer_layer.h"

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "locus/errors.h"
#include "locus/nn/activation.h"
#include "locus/ops.h"

namespace locus::nn {
namespace {

// PyTorch's MultiheadAttention options for a layer's attention: bias on, no extra keys.
template <class Options>
MultiheadAttentionOptions attention_options(const TransformerLayerOptionsBase<Options>& o) {
  return MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).batch_first(o.batch_first());
}

// The options of a layer's norms.
template <class Options>
LayerNormOptions norm_options(const TransformerLayerOptionsBase<Options>& o) {
  return LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
}

// The attention block: attention, then dropout. need_weights=false, so the attention may take a
// fused path (Note [Attention paths]).
Tensor attention_block(MultiheadAttention& attention, Dropout& dropout, const Tensor& x, const Tensor& memory,
                       const Tensor& mask, const Tensor& key_padding_mask, bool is_causal) {
  return dropout(std::get<0>(attention(x, memory, memory, key_padding_mask, false, mask, true, is_causal)));
}

Tensor feed_forward_block(const TransformerActivation& activation, Linear& linear1, Dropout& dropout, Linear& linear2,
                          Dropout& dropout2, const Tensor& x) {
  return dropout2(linear2(dropout(activation(linear1(x)))));
}

// A block with its residual connection and its norm: norm(x + block(x)), or with norm_first
// x + block(norm(x)).
template <class Block>
Tensor residual(const Tensor& x, const Block& block, LayerNorm& norm, bool norm_first) {
  return norm_first ? add(x, block(norm(x))) : norm(add(x, block(x)));
}

// Re-draws the parameters of each of a layer's submodules that has any.
template <class... Modules>
void reset_each(Modules&... modules) {
  (modules->reset_parameters(), ...);
}

// d_model and nhead are MultiheadAttention's to check, with PyTorch's messages.
void check_options(const char* layer, int64_t dim_feedforward, double dropout) {
  if (dim_feedforward <= 0)
    throw ValueError(std::string(layer) + ": dim_feedforward must be positive, got " + std::to_string(dim_feedforward));
  if (!(dropout >= 0 && dropout <= 1))
    throw ValueError(std::string(layer) + ": dropout probability has to be between 0 and 1, but got " + std::to_string(dropout));
}

// Note [Transformer layer registration]: both layers register their modules in PyTorch's
// order, which is the state_dict's: the attention blocks, the feed-forward block (linear1,
// dropout, linear2), the norms (norm1..), then the dropouts after the blocks (dropout1..). The
// three groups they share are written once here; `reg` is the layer's register_module.
template <class Reg, class Options, size_t N>
void register_shared_modules(const Reg& reg, const TransformerLayerOptionsBase<Options>& o, Linear& linear1,
                             Dropout& dropout, Linear& linear2, const std::array<LayerNorm*, N>& norms,
                             const std::array<Dropout*, N>& dropouts) {
  linear1 = reg("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = reg("dropout", Dropout(o.dropout()));
  linear2 = reg("linear2", Linear(o.dim_feedforward(), o.d_model()));
  for (size_t i = 0; i < N; ++i) *norms[i] = reg("norm" + std::to_string(i + 1), LayerNorm(norm_options(o)));
  for (size_t i = 0; i < N; ++i) *dropouts[i] = reg("dropout" + std::to_string(i + 1), Dropout(o.dropout()));
}

}  // namespace

TransformerActivation::TransformerActivation(const char* name) {
  const std::string n = name;
  if (n == "relu") kind = ReLU;
  else if (n == "gelu") kind = GELU;
  else throw ValueError("activation should be relu/gelu, not " + n);
}

Tensor TransformerActivation::operator()(const Tensor& x) const {
  switch (kind) {
    case ReLU: return relu(x);
    case GELU: return functional::gelu(x);
    case Custom: break;
  }
  if (!function) throw ValueError("TransformerActivation: the custom activation is an empty function");
  return function(x);
}

// ---- TransformerEncoderLayer ---------------------------------------------------------------------

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o) : options(o) {
  check_options("TransformerEncoderLayer", o.dim_feedforward(), o.dropout());
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  // Note [Transformer layer registration].
  const auto reg = [this](const std::string& name, auto module) { return register_module(name, std::move(module)); };
  self_attn = reg("self_attn", MultiheadAttention(attention_options(options)));
  register_shared_modules(reg, options, linear1, dropout, linear2, std::array{&norm1, &norm2},
                          std::array{&dropout1, &dropout2});
}

void TransformerEncoderLayerImpl::reset_parameters() {
  reset_each(self_attn, linear1, linear2, norm1, norm2);
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask,
                                            bool is_causal) {
  const auto sa = [&](const Tensor& x) {
    return attention_block(self_attn, dropout1, x, x, src_mask, src_key_padding_mask, is_causal);
  };
  const auto ff = [&](const Tensor& x) {
    return feed_forward_block(options.activation(), linear1, dropout, linear2, dropout2, x);
  };
  const Tensor x = residual(src, sa, norm1, options.norm_first());
  return residual(x, ff, norm2, options.norm_first());
}

// ---- TransformerDecoderLayer ---------------------------------------------------------------------

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& o) : options(o) {
  check_options("TransformerDecoderLayer", o.dim_feedforward(), o.dropout());
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  // Note [Transformer layer registration].
  const auto reg = [this](const std::string& name, auto module) { return register_module(name, std::move(module)); };
  self_attn = reg("self_attn", MultiheadAttention(attention_options(options)));
  multihead_attn = reg("multihead_attn", MultiheadAttention(attention_options(options)));
  register_shared_modules(reg, options, linear1, dropout, linear2, std::array{&norm1, &norm2, &norm3},
                          std::array{&dropout1, &dropout2, &dropout3});
}

void TransformerDecoderLayerImpl::reset_parameters() {
  reset_each(self_attn, multihead_attn, linear1, linear2, norm1, norm2, norm3);
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask, bool tgt_is_causal, bool memory_is_causal) {
  const auto sa = [&](const Tensor& x) {
    return attention_block(self_attn, dropout1, x, x, tgt_mask, tgt_key_padding_mask, tgt_is_causal);
  };
  const auto mha = [&](const Tensor& x) {
    return attention_block(multihead_attn, dropout2, x, memory, memory_mask, memory_key_padding_mask, memory_is_causal);
  };
  const auto ff = [&](const Tensor& x) {
    return feed_forward_block(options.activation(), linear1, dropout, linear2, dropout3, x);
  };
  Tensor x = residual(tgt, sa, norm1, options.norm_first());
  x = residual(x, mha, norm2, options.norm_first());
  return residual(x, ff, norm3, options.norm_first());
}

}  // namespace locus::nn
