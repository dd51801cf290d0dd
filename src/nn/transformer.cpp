// The stacks (clones of one layer, then an optional norm) and nn::Transformer, as PyTorch's
// nn.TransformerEncoder, nn.TransformerDecoder and nn.Transformer.

#include "locus/nn/transformer.h"

#include <limits>
#include <string>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/init.h"
#include "locus/ops.h"
#include "src/nn/python_repr.h"

namespace locus::nn {
namespace {

void check_depth(const char* stack, int64_t num_layers) {
  if (num_layers < 1) throw ValueError(std::string(stack) + ": num_layers must be at least 1, got " + std::to_string(num_layers));
}

// The stack's layers: num_layers clones of `layer`, values included (PyTorch's deepcopy).
template <class Layer>
ModuleList clones(const Layer& layer, int64_t num_layers) {
  ModuleList list;
  for (int64_t i = 0; i < num_layers; ++i) list->push_back(AnyModule(layer->clone()));
  return list;
}

// A clone of the final norm, or null without one (LibTorch clones it, as the layers).
std::shared_ptr<Module> norm_clone(const std::optional<AnyModule>& norm) {
  return norm && norm->ptr() ? norm->ptr()->clone() : nullptr;
}

// The options nn::Transformer gives the layers of both its stacks.
template <class LayerOptions>
LayerOptions layer_options(const TransformerOptions& o) {
  LayerOptions l(o.d_model(), o.nhead());
  l.dim_feedforward(o.dim_feedforward()).dropout(o.dropout()).activation(o.activation());
  l.layer_norm_eps(o.layer_norm_eps()).batch_first(o.batch_first()).norm_first(o.norm_first());
  return l;
}

}  // namespace

// ---- TransformerEncoder --------------------------------------------------------------------------

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions o) : options(std::move(o)) {
  if (options.encoder_layer().is_empty()) throw ValueError("TransformerEncoder: encoder_layer is an empty handle");
  check_depth("TransformerEncoder", options.num_layers());
  reset();
}

void TransformerEncoderImpl::reset() {
  layers = register_module("layers", clones(options.encoder_layer(), options.num_layers()));
  norm = norm_clone(options.norm());
  if (norm) register_module("norm", norm);
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask,
                                       bool is_causal) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayerImpl>(i).forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? norm->forward(x) : x;
}

// ---- TransformerDecoder --------------------------------------------------------------------------

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions o) : options(std::move(o)) {
  if (options.decoder_layer().is_empty()) throw ValueError("TransformerDecoder: decoder_layer is an empty handle");
  check_depth("TransformerDecoder", options.num_layers());
  reset();
}

void TransformerDecoderImpl::reset() {
  layers = register_module("layers", clones(options.decoder_layer(), options.num_layers()));
  norm = norm_clone(options.norm());
  if (norm) register_module("norm", norm);
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask, bool tgt_is_causal, bool memory_is_causal) {
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerDecoderLayerImpl>(i).forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                           memory_key_padding_mask, tgt_is_causal, memory_is_causal);
  return norm ? norm->forward(x) : x;
}

// ---- Transformer ---------------------------------------------------------------------------------

TransformerImpl::TransformerImpl(TransformerOptions o) : options(std::move(o)) {
  reset();
}

void TransformerImpl::reset() {
  const TransformerOptions& o = options;
  const LayerNormOptions norm = LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
  if (o.custom_encoder()) {
    encoder = register_module("encoder", TransformerEncoder(std::dynamic_pointer_cast<TransformerEncoderImpl>(o.custom_encoder().value()->clone())));
  } else {
    const TransformerEncoderLayer layer(layer_options<TransformerEncoderLayerOptions>(o));
    encoder = register_module("encoder", TransformerEncoder(TransformerEncoderOptions(layer, o.num_encoder_layers())
                                                                .norm(AnyModule(LayerNorm(norm)))));
  }
  if (o.custom_decoder()) {
    decoder = register_module("decoder", TransformerDecoder(std::dynamic_pointer_cast<TransformerDecoderImpl>(o.custom_decoder().value()->clone())));
  } else {
    const TransformerDecoderLayer layer(layer_options<TransformerDecoderLayerOptions>(o));
    decoder = register_module("decoder", TransformerDecoder(TransformerDecoderOptions(layer, o.num_decoder_layers())
                                                                .norm(AnyModule(LayerNorm(norm)))));
  }
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  NoGradGuard no_grad;
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                                const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask) {
  const bool batched = src.dim() == 3;
  const int64_t batch_dim = options.batch_first() ? 0 : 1;
  if (!batched && tgt.dim() == 3) throw ShapeError("Transformer: src and tgt must both be batched (3-D) or both unbatched (2-D)");
  if (batched && (tgt.dim() != 3 || src.size(batch_dim) != tgt.size(batch_dim)))
    throw ShapeError("Transformer: the batch number of src and tgt must be equal, got src " + detail::shape_text(src.shape()) +
                     " and tgt " + detail::shape_text(tgt.shape()));
  if (src.size(-1) != options.d_model() || tgt.size(-1) != options.d_model())
    throw ShapeError("Transformer: the feature number of src and tgt must be equal to d_model (" +
                     std::to_string(options.d_model()) + "), got src " + detail::shape_text(src.shape()) + " and tgt " +
                     detail::shape_text(tgt.shape()));
  const Tensor memory = encoder(src, src_mask, src_key_padding_mask);
  return decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  if (sz < 0) throw ValueError("generate_square_subsequent_mask: sz must be non-negative, got " + std::to_string(sz));
  const TensorOptions o = options.dtype_opt() ? options : options.dtype(kFloat32);
  return triu(full({sz, sz}, -std::numeric_limits<double>::infinity(), o), 1);
}

}  // namespace locus::nn
