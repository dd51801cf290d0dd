// The Locus calls of the `transformer` golden family (gen_transformer.py): F::layer_norm,
// F::rms_norm, F::embedding, scaled_dot_product_attention, nn::MultiheadAttention (its
// parameters are the case's inputs, named as in its state_dict) and the transformer layers,
// stacks and nn::Transformer (their parameters' values come from inputs of their state_dict
// names). `normalized_shape=5` or
// `normalized_shape=3,4`.

#include <optional>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

namespace F = locus::nn::functional;


std::vector<int64_t> normalized_shape(const Ctx& c) {
  const Shape s = c.list("normalized_shape");
  return {s.begin(), s.end()};
}

// nn::MultiheadAttention in eval mode whose parameters are the case's inputs themselves, so the
// gradients reach them.
Outs multihead_attention(const Ctx& c) {
  nn::MultiheadAttentionOptions o(c.i64("embed_dim"), c.i64("num_heads"));
  o.bias(!c.has("bias") || c.flag("bias")).add_bias_kv(c.flag("add_bias_kv")).add_zero_attn(c.flag("add_zero_attn"));
  o.batch_first(c.flag("batch_first"));
  if (c.has("kdim")) o.kdim(c.i64("kdim"));
  if (c.has("vdim")) o.vdim(c.i64("vdim"));
  nn::MultiheadAttention m(o);
  m->eval();
  m->to(c.named("query").dtype());
  m->in_proj_weight = c.named("in_proj_weight");
  m->q_proj_weight = c.named("q_proj_weight");
  m->k_proj_weight = c.named("k_proj_weight");
  m->v_proj_weight = c.named("v_proj_weight");
  m->in_proj_bias = c.named("in_proj_bias");
  m->bias_k = c.named("bias_k");
  m->bias_v = c.named("bias_v");
  m->out_proj->weight = c.named("out_proj.weight");
  m->out_proj->bias = c.named("out_proj.bias");
  const bool need_weights = !c.has("need_weights") || c.flag("need_weights");
  auto [out, weights] = m(c.named("query"), c.named("key"), c.named("value"), c.named("key_padding_mask"), need_weights,
                          c.named("attn_mask"), !c.has("average_attn_weights") || c.flag("average_attn_weights"));
  if (!need_weights) return {out};
  return {out, weights};
}

// The options every transformer case shares.
template <class Options>
Options layer_options(const Ctx& c) {
  Options o(c.i64("d_model"), c.i64("nhead"));
  o.dim_feedforward(c.i64("dim_feedforward")).activation(c.str("activation"));
  o.norm_first(c.flag("norm_first")).batch_first(c.flag("batch_first")).layer_norm_eps(c.f64("layer_norm_eps", 1e-5));
  return o;
}

// `m` in eval mode, on the device and in the dtype of `like` (the case's data), with every
// parameter's values from the input of its state_dict name (the data alone requires grad).
void load_parameters(nn::Module& m, const Ctx& c, const Tensor& like) {
  m.eval();
  m.to(like.device(), like.dtype());
  NoGradGuard no_grad;
  for (auto& [name, p] : m.named_parameters()) {
    const Tensor v = c.named(name.c_str());
    if (!v.defined()) throw ValueError("the case has no input " + name);
    p.copy_(v);
  }
}

std::optional<nn::AnyModule> final_norm(const Ctx& c) {
  if (!c.flag("final_norm")) return std::nullopt;
  return nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({c.i64("d_model")}).eps(c.f64("layer_norm_eps", 1e-5))));
}

Outs encoder_layer(const Ctx& c) {
  nn::TransformerEncoderLayer m(layer_options<nn::TransformerEncoderLayerOptions>(c));
  load_parameters(*m, c, c.named("src"));
  return {m(c.named("src"), c.named("src_mask"), c.named("src_key_padding_mask"))};
}

Outs decoder_layer(const Ctx& c) {
  nn::TransformerDecoderLayer m(layer_options<nn::TransformerDecoderLayerOptions>(c));
  load_parameters(*m, c, c.named("tgt"));
  return {m(c.named("tgt"), c.named("memory"), c.named("tgt_mask"), c.named("memory_mask"), c.named("tgt_key_padding_mask"),
            c.named("memory_key_padding_mask"))};
}

Outs encoder(const Ctx& c) {
  nn::TransformerEncoder m(nn::TransformerEncoderOptions(nn::TransformerEncoderLayer(layer_options<nn::TransformerEncoderLayerOptions>(c)),
                                                         c.i64("num_layers"))
                               .norm(final_norm(c)));
  load_parameters(*m, c, c.named("src"));
  return {m(c.named("src"), c.named("src_mask"), c.named("src_key_padding_mask"))};
}

Outs decoder(const Ctx& c) {
  nn::TransformerDecoder m(nn::TransformerDecoderOptions(nn::TransformerDecoderLayer(layer_options<nn::TransformerDecoderLayerOptions>(c)),
                                                         c.i64("num_layers"))
                               .norm(final_norm(c)));
  load_parameters(*m, c, c.named("tgt"));
  return {m(c.named("tgt"), c.named("memory"), c.named("tgt_mask"), c.named("memory_mask"), c.named("tgt_key_padding_mask"),
            c.named("memory_key_padding_mask"))};
}

Outs transformer(const Ctx& c) {
  nn::Transformer m(nn::TransformerOptions(c.i64("d_model"), c.i64("nhead"), c.i64("num_encoder_layers"), c.i64("num_decoder_layers"))
                        .dim_feedforward(c.i64("dim_feedforward"))
                        .activation(c.str("activation"))
                        .norm_first(c.flag("norm_first"))
                        .batch_first(c.flag("batch_first"))
                        .layer_norm_eps(c.f64("layer_norm_eps", 1e-5)));
  load_parameters(*m, c, c.named("src"));
  return {m(c.named("src"), c.named("tgt"), c.named("src_mask"), c.named("tgt_mask"), c.named("memory_mask"),
            c.named("src_key_padding_mask"), c.named("tgt_key_padding_mask"), c.named("memory_key_padding_mask"))};
}

const OpRegistrar registered{
    {"multihead_attention", multihead_attention},
    {"transformer_encoder_layer", encoder_layer},
    {"transformer_decoder_layer", decoder_layer},
    {"transformer_encoder", encoder},
    {"transformer_decoder", decoder},
    {"transformer", transformer},
    {"generate_square_subsequent_mask",
     [](const Ctx& c) -> Outs { return {nn::TransformerImpl::generate_square_subsequent_mask(c.i64("sz"))}; }},
    {"layer_norm",
     [](const Ctx& c) -> Outs {
       return {F::layer_norm(c.x(0), F::LayerNormFuncOptions(normalized_shape(c))
                                         .weight(c.named("weight"))
                                         .bias(c.named("bias"))
                                         .eps(c.f64("eps", 1e-5)))};
     }},
    {"rms_norm",
     [](const Ctx& c) -> Outs {
       F::RMSNormFuncOptions o(normalized_shape(c));
       o.weight(c.named("weight"));
       if (c.has("eps")) o.eps(c.f64("eps"));
       return {F::rms_norm(c.x(0), o)};
     }},
    {"embedding",
     [](const Ctx& c) -> Outs {
       F::EmbeddingFuncOptions o;
       if (c.has("padding_idx")) o.padding_idx(c.i64("padding_idx"));
       if (c.has("max_norm")) o.max_norm(c.f64("max_norm"));
       o.norm_type(c.f64("norm_type", 2.0)).scale_grad_by_freq(c.flag("scale_grad_by_freq"));
       // max_norm renormalises the table in place: a copy, as the generator's.
       const Tensor weight = c.has("max_norm") ? c.x(1).clone() : c.x(1);
       return {F::embedding(c.x(0), weight, o)};
     }},
    {"scaled_dot_product_attention",
     [](const Ctx& c) -> Outs {
       const std::optional<double> scale = c.has("scale") ? std::optional<double>(c.f64("scale")) : std::nullopt;
       return {scaled_dot_product_attention(c.named("query"), c.named("key"), c.named("value"), c.named("attn_mask"),
                                            0.0, c.flag("is_causal"), scale)};
     }},
};

}  // namespace
}  // namespace locus::golden
