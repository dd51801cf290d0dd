// nn::MultiheadAttention as PyTorch 1.13's F.multi_head_attention_forward: the projections, the
// bias_k/bias_v and zero-attention columns with the masks padded to match, the key padding mask
// merged into the attention mask, the heads' attention (scores = q k^T / sqrt(head_dim) + mask,
// softmax, dropout, times v), the output projection and the heads' averaged weights.

#include "locus/nn/multihead_attention.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "locus/attention.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional.h"
#include "locus/nn/functional/padding.h"
#include "locus/nn/init.h"
#include "locus/ops.h"
#include "locus/products.h"
#include "locus/shape_ops.h"
#include "src/nn/python_repr.h"

namespace locus::nn {
namespace {

std::string shape_text(const Tensor& t) { return detail::shape_text(t.shape()); }
using detail::shape_text;

// One more key position in a mask: a zero column at the end (PyTorch's pad(mask, (0, 1))).
Tensor pad_key(const Tensor& mask) {
  return mask.defined() ? functional::pad(mask, functional::PadFuncOptions({0, 1})) : mask;
}

// The bool mask as the float one PyTorch builds from it: -inf where true, 0 elsewhere.
Tensor as_additive(const Tensor& mask, DType dtype) {
  if (!mask.defined() || mask.dtype() != kBool) return mask;
  return masked_fill(zeros(mask.shape(), TensorOptions().dtype(dtype).device(mask.device())), mask,
                     -std::numeric_limits<double>::infinity());
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o) : options(o) {
  if (o.embed_dim() <= 0 || o.num_heads() <= 0)
    throw ValueError("MultiheadAttention: embed_dim and num_heads must be positive, got " + std::to_string(o.embed_dim()) +
                     " and " + std::to_string(o.num_heads()));
  if (o.embed_dim() % o.num_heads() != 0) throw ValueError("MultiheadAttention: embed_dim must be divisible by num_heads");
  if (!(o.dropout() >= 0 && o.dropout() <= 1))
    throw ValueError("MultiheadAttention: dropout probability has to be between 0 and 1");
  reset();
}

bool MultiheadAttentionImpl::same_dims() const {
  const int64_t e = options.embed_dim();
  return options.kdim().value_or(e) == e && options.vdim().value_or(e) == e;
}

void MultiheadAttentionImpl::reset() {
  const int64_t e = options.embed_dim();
  // PyTorch's registration order, which is the state_dict's: the projections, in_proj_bias,
  // bias_k, bias_v, then out_proj's.
  if (same_dims()) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, options.kdim().value_or(e)}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, options.vdim().value_or(e)}));
  }
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * e}));
  out_proj = register_module("out_proj", Linear(e, e, options.bias()));
  if (options.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  }
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  NoGradGuard no_grad;
  if (same_dims()) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    in_proj_bias.zero_();
    out_proj->bias.zero_();
  }
  if (bias_k.defined()) {
    init::xavier_normal_(bias_k);
    init::xavier_normal_(bias_v);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query_in, const Tensor& key_in,
                                                           const Tensor& value_in, const Tensor& key_padding_mask_in,
                                                           bool need_weights, const Tensor& attn_mask_in,
                                                           bool average_attn_weights, bool is_causal) {
  const std::string prefix = "MultiheadAttention: ";
  const bool batched = query_in.dim() == 3;
  if (query_in.dim() != 3 && query_in.dim() != 2)
    throw ShapeError(prefix + "query should be unbatched 2D or batched 3D tensor but received " +
                     std::to_string(query_in.dim()) + "-D query tensor");
  if (key_in.dim() != query_in.dim() || value_in.dim() != query_in.dim())
    throw ShapeError(prefix + "query, key and value must have the same number of dims, got " + shape_text(query_in) + ", " +
                     shape_text(key_in) + " and " + shape_text(value_in));
  // [L, N, E] from every layout: batch_first swaps the first two dims, unbatched adds N = 1.
  const auto canonical = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(1);
    return options.batch_first() ? t.transpose(0, 1) : t;
  };
  const Tensor query = canonical(query_in), key = canonical(key_in), value = canonical(value_in);
  Tensor key_padding_mask = key_padding_mask_in.defined() && !batched ? key_padding_mask_in.unsqueeze(0) : key_padding_mask_in;
  const int64_t tgt_len = query.size(0), bsz = query.size(1), e = options.embed_dim(), heads = options.num_heads();
  const int64_t head_dim = e / heads;
  if (query.size(2) != e)
    throw ShapeError(prefix + "was expecting embedding dimension of " + std::to_string(e) + ", but got " +
                     std::to_string(query.size(2)));
  if (key.size(0) != value.size(0) || key.size(1) != bsz || value.size(1) != bsz)
    throw ShapeError(prefix + "key shape " + shape_text(key_in) + " does not match value shape " + shape_text(value_in) +
                     " or the query's batch");
  // The projections.
  Tensor b_q, b_k, b_v;
  if (in_proj_bias.defined()) b_q = in_proj_bias.narrow(0, 0, e), b_k = in_proj_bias.narrow(0, e, e), b_v = in_proj_bias.narrow(0, 2 * e, e);
  const Tensor w_q = same_dims() ? in_proj_weight.narrow(0, 0, e) : q_proj_weight;
  const Tensor w_k = same_dims() ? in_proj_weight.narrow(0, e, e) : k_proj_weight;
  const Tensor w_v = same_dims() ? in_proj_weight.narrow(0, 2 * e, e) : v_proj_weight;
  Tensor q = functional::linear(query, w_q, b_q), k = functional::linear(key, w_k, b_k), v = functional::linear(value, w_v, b_v);
  // The attention mask as [1 or N * heads, L, S].
  int64_t src_len = key.size(0);
  Tensor attn_mask = attn_mask_in;
  // The hint without a mask: the causal mask it stands for, unless the fused causal path below
  // can do without one.
  const bool causal_path = is_causal && !need_weights && !key_padding_mask.defined() && !bias_k.defined() &&
                           !options.add_zero_attn();
  if (is_causal && !attn_mask.defined() && !causal_path)
    attn_mask = triu(full({tgt_len, src_len}, -std::numeric_limits<double>::infinity(),
                          TensorOptions().dtype(q.dtype()).device(q.device())),
                     1);
  if (attn_mask.defined()) {
    if (attn_mask.dtype() != kBool && !is_floating_point(attn_mask.dtype()))
      throw DTypeError(prefix + "Only float and bool types are supported for attn_mask, not " +
                       std::string(dtype_name(attn_mask.dtype())));
    if (attn_mask.dim() == 2) {
      if (attn_mask.shape() != Shape{tgt_len, src_len})
        throw ShapeError(prefix + "The shape of the 2D attn_mask is " + shape_text(attn_mask) + ", but should be " +
                         shape_text(Shape{tgt_len, src_len}) + ".");
      attn_mask = attn_mask.unsqueeze(0);
    } else if (attn_mask.dim() == 3) {
      if (attn_mask.shape() != Shape{bsz * heads, tgt_len, src_len})
        throw ShapeError(prefix + "The shape of the 3D attn_mask is " + shape_text(attn_mask) + ", but should be " +
                         shape_text(Shape{bsz * heads, tgt_len, src_len}) + ".");
    } else {
      throw ShapeError(prefix + "attn_mask's dimension " + std::to_string(attn_mask.dim()) + " is not supported");
    }
  }
  if (key_padding_mask.defined() && key_padding_mask.dtype() != kBool)
    throw DTypeError(prefix + "only bool key_padding_mask is supported, got " + std::string(dtype_name(key_padding_mask.dtype())));
  if (bias_k.defined()) {
    k = cat({k, bias_k.expand({1, bsz, e})});
    v = cat({v, bias_v.expand({1, bsz, e})});
    attn_mask = pad_key(attn_mask), key_padding_mask = pad_key(key_padding_mask);
  }
  // Heads into the batch: [N * heads, L or S, head_dim].
  q = q.contiguous().view({tgt_len, bsz * heads, head_dim}).transpose(0, 1);
  k = k.contiguous().view({k.size(0), bsz * heads, head_dim}).transpose(0, 1);
  v = v.contiguous().view({v.size(0), bsz * heads, head_dim}).transpose(0, 1);
  if (options.add_zero_attn()) {
    const Tensor zero = zeros({bsz * heads, 1, head_dim}, TensorOptions().dtype(k.dtype()).device(k.device()));
    k = cat({k, zero}, 1), v = cat({v, zero}, 1);
    attn_mask = pad_key(attn_mask), key_padding_mask = pad_key(key_padding_mask);
  }
  src_len = k.size(1);
  if (key_padding_mask.defined()) {
    if (key_padding_mask.shape() != Shape{bsz, src_len})
      throw ShapeError(prefix + "expecting key_padding_mask shape of " + shape_text(Shape{bsz, src_len}) + ", but got " +
                       shape_text(key_padding_mask));
    const Tensor padding = key_padding_mask.view({bsz, 1, 1, src_len}).expand({bsz, heads, 1, src_len}).reshape({bsz * heads, 1, src_len});
    if (!attn_mask.defined()) attn_mask = padding;
    else if (attn_mask.dtype() == kBool) attn_mask = logical_or(attn_mask, padding);
    else attn_mask = masked_fill(attn_mask, padding, -std::numeric_limits<double>::infinity());
  }
  attn_mask = as_additive(attn_mask, q.dtype());
  const double p = is_training() ? options.dropout() : 0.0;
  // The heads' outputs [L * N, E] through out_proj, back in the query's layout.
  const auto project = [&](const Tensor& heads_out) {
    Tensor out = out_proj(heads_out).view({tgt_len, bsz, e});
    if (!batched) return out.squeeze(1);
    return options.batch_first() ? out.transpose(0, 1) : out;
  };
  if (!need_weights) {
    // PyTorch 2.x's way: the heads' attention as scaled_dot_product_attention over
    // [N, heads, L or S, head_dim], so that it can take a fused path.
    const auto per_head = [&](const Tensor& t) { return t.reshape({bsz, heads, t.size(1), head_dim}); };
    Tensor mask;
    if (attn_mask.defined() && !causal_path)
      mask = attn_mask.size(0) == 1 ? attn_mask.unsqueeze(0) : attn_mask.reshape({bsz, heads, attn_mask.size(1), src_len});
    const Tensor out = scaled_dot_product_attention(per_head(q), per_head(k), per_head(v), mask, p, causal_path);
    return {project(out.permute({2, 0, 1, 3}).reshape({tgt_len * bsz, e})), Tensor()};
  }
  // The heads' attention, as 1.13's _scaled_dot_product_attention.
  q = div(q, std::sqrt(static_cast<double>(head_dim)));
  Tensor scores = attn_mask.defined() ? baddbmm(attn_mask, q, k.transpose(-2, -1)) : bmm(q, k.transpose(-2, -1));
  // The weights returned are the ones the values are weighted with: after dropout, as PyTorch's.
  Tensor weights = softmax(scores, -1);
  if (p > 0) weights = locus::dropout(weights, p, true);
  const Tensor out = project(bmm(weights, v).transpose(0, 1).contiguous().view({tgt_len * bsz, e}));
  weights = weights.view({bsz, heads, tgt_len, src_len});
  if (average_attn_weights) weights = div(sum(weights, Shape{1}), static_cast<double>(heads));
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace locus::nn
