// The stacks (clones of one layer, then an optional norm) and nn::Transformer, as PyTorch's
// nn.TransformerEncoder, nn.TransformerDecoder and nn.Transformer.

#include "locus/nn/transformer.h"

#include <limits>
#include <string>
#include <type_traits>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/init.h"
#include "locus/ops.h"
#include "src/nn/python_repr.h"

namespace locus::nn {
namespace {

// The layer a stack's options clone.
const TransformerEncoderLayer& layer_of(const TransformerEncoderOptions& o) { return o.encoder_layer(); }
const TransformerDecoderLayer& layer_of(const TransformerDecoderOptions& o) { return o.decoder_layer(); }

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

// One of nn::Transformer's stacks: a clone of `custom` when it is set, else `num_layers`
// layers with the model's options and a final LayerNorm.
template <class StackOptions, class Layer, class Stack>
Stack model_stack(const std::optional<Stack>& custom, int64_t num_layers, const TransformerOptions& o) {
  if (custom) return Stack(std::dynamic_pointer_cast<typename Stack::ContainedType>(custom.value()->clone()));
  const Layer layer(layer_options<decltype(Layer::ContainedType::options)>(o));
  const LayerNormOptions norm = LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
  return Stack(StackOptions(layer, num_layers).norm(AnyModule(LayerNorm(norm))));
}

}  // namespace

// ---- The stacks ----------------------------------------------------------------------------------

template <class Derived, class Options>
TransformerStackBase<Derived, Options>::TransformerStackBase(Options o) : options(std::move(o)) {
  constexpr bool encoder = std::is_same_v<Options, TransformerEncoderOptions>;
  const std::string stack = encoder ? "TransformerEncoder" : "TransformerDecoder";
  if (layer_of(options).is_empty())
    throw ValueError(stack + (encoder ? ": encoder_layer" : ": decoder_layer") + " is an empty handle");
  if (options.num_layers() < 1)
    throw ValueError(stack + ": num_layers must be at least 1, got " + std::to_string(options.num_layers()));
  reset();
}

template <class Derived, class Options>
void TransformerStackBase<Derived, Options>::reset() {
  layers = this->register_module("layers", clones(layer_of(options), options.num_layers()));
  norm = norm_clone(options.norm());
  if (norm) this->register_module("norm", norm);
}

template class TransformerStackBase<TransformerEncoderImpl, TransformerEncoderOptions>;
template class TransformerStackBase<TransformerDecoderImpl, TransformerDecoderOptions>;

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask,
                                       bool is_causal) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayerImpl>(i).forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? norm->forward(x) : x;
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
  encoder = register_module("encoder", model_stack<TransformerEncoderOptions, TransformerEncoderLayer>(
                                           o.custom_encoder(), o.num_encoder_layers(), o));
  decoder = register_module("decoder", model_stack<TransformerDecoderOptions, TransformerDecoderLayer>(
                                           o.custom_decoder(), o.num_decoder_layers(), o));
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
