// The Locus calls of the `transformer` golden family (gen_transformer.py): F::layer_norm,
// F::rms_norm, F::embedding, scaled_dot_product_attention and nn::MultiheadAttention (its
// parameters are the case's inputs, named as in its state_dict). `normalized_shape=5` or
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

const OpRegistrar registered{
    {"multihead_attention", multihead_attention},
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
