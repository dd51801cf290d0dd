#pragma once
/// \file transformer.h
/// nn::TransformerEncoder, nn::TransformerDecoder (stacks of clones of one layer, with an
/// optional final norm) and nn::Transformer, with PyTorch's state_dict names: layers.0.*, ...,
/// norm.* (encoder.* and decoder.* in the Transformer).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>

#include "locus/arg.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/containers.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/transformer_layer.h"
#include "locus/tensor_options.h"

namespace locus::nn {

/// What the options of both stacks share, for the options `Derived` of one of them, which adds
/// its layer: the depth and the final norm.
template <class Derived>
struct TransformerStackOptionsBase {
  /// `num_layers` layers.
  explicit TransformerStackOptionsBase(int64_t num_layers) : num_layers_(num_layers) {}
  /// How many.
  LOCUS_DERIVED_ARG(int64_t, num_layers);
  /// Applied to the last layer's output (none when empty).
  LOCUS_DERIVED_ARG(std::optional<AnyModule>, norm) = std::nullopt;
};

/// Options of nn::TransformerEncoder: `TransformerEncoderOptions(layer, 6).norm(AnyModule(LayerNorm(...)))`.
struct TransformerEncoderOptions : TransformerStackOptionsBase<TransformerEncoderOptions> {
  /// num_layers clones of encoder_layer.
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerStackOptionsBase(num_layers), encoder_layer_(std::move(encoder_layer)) {}
  /// The layer cloned (its parameters' values included, as PyTorch's deepcopy).
  LOCUS_ARG(TransformerEncoderLayer, encoder_layer);
};

/// Options of nn::TransformerDecoder, the encoder's.
struct TransformerDecoderOptions : TransformerStackOptionsBase<TransformerDecoderOptions> {
  /// num_layers clones of decoder_layer.
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerStackOptionsBase(num_layers), decoder_layer_(std::move(decoder_layer)) {}
  /// The layer cloned.
  LOCUS_ARG(TransformerDecoderLayer, decoder_layer);
};

/// What the encoder and decoder stacks share, for the stack class `Derived` with `Options`:
/// num_layers clones of the options' layer (ValueError at construction for an empty layer
/// handle or num_layers < 1) and the optional final norm, registered as PyTorch's `layers` and
/// `norm`.
template <class Derived, class Options>
class TransformerStackBase : public Cloneable<Derived> {
 public:
  /// A stack with `options`.
  explicit TransformerStackBase(Options options);
  /// Registers the layers' clones and the norm.
  void reset() override;
  /// The options the stack was built with.
  Options options;
  /// The layers.
  ModuleList layers{nullptr};
  /// The final norm (null without one).
  std::shared_ptr<Module> norm;
};

/// A stack of encoder layers, as PyTorch's nn.TransformerEncoder (without 1.13's nested-tensor
/// fast path, whose output zeroes padded positions). ValueError at construction for
/// num_layers < 1.
class TransformerEncoderImpl : public TransformerStackBase<TransformerEncoderImpl, TransformerEncoderOptions> {
 public:
  using TransformerStackBase::TransformerStackBase;
  /// `nn::TransformerEncoder(layer, num_layers)`.
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerStackBase(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}
  /// Each layer in turn with the same masks, then the norm.
  Tensor forward(const Tensor& src, const Tensor& mask = {}, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);
};
LOCUS_MODULE(TransformerEncoder);

/// A stack of decoder layers, as PyTorch's nn.TransformerDecoder.
class TransformerDecoderImpl : public TransformerStackBase<TransformerDecoderImpl, TransformerDecoderOptions> {
 public:
  using TransformerStackBase::TransformerStackBase;
  /// `nn::TransformerDecoder(layer, num_layers)`.
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerStackBase(TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}
  /// Each layer in turn over the same memory and masks, then the norm.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool tgt_is_causal = false, bool memory_is_causal = false);
};
LOCUS_MODULE(TransformerDecoder);

// Their shared members are compiled once, in src/nn/transformer.cpp.
extern template class TransformerStackBase<TransformerEncoderImpl, TransformerEncoderOptions>;
extern template class TransformerStackBase<TransformerDecoderImpl, TransformerDecoderOptions>;

/// Options of nn::Transformer: `TransformerOptions(512, 8, 6, 6)`, PyTorch's defaults.
struct TransformerOptions {
  /// The defaults of PyTorch's nn.Transformer(); set any of them with the builders.
  TransformerOptions() = default;
  /// Width, heads and the two depths.
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model), nhead_(nhead), num_encoder_layers_(num_encoder_layers), num_decoder_layers_(num_decoder_layers) {}
  /// The model's width E.
  LOCUS_ARG(int64_t, d_model) = 512;
  /// Attention heads.
  LOCUS_ARG(int64_t, nhead) = 8;
  /// Encoder layers.
  LOCUS_ARG(int64_t, num_encoder_layers) = 6;
  /// Decoder layers.
  LOCUS_ARG(int64_t, num_decoder_layers) = 6;
  /// The feed-forward blocks' hidden width.
  LOCUS_ARG(int64_t, dim_feedforward) = 2048;
  /// Every layer's dropout.
  LOCUS_ARG(double, dropout) = 0.1;
  /// The feed-forward blocks' activation.
  LOCUS_ARG(TransformerActivation, activation) = kReLU;
  /// Used instead of the encoder stack when set (its forward takes src, mask, src_key_padding_mask).
  LOCUS_ARG(std::optional<TransformerEncoder>, custom_encoder) = std::nullopt;
  /// Used instead of the decoder stack when set.
  LOCUS_ARG(std::optional<TransformerDecoder>, custom_decoder) = std::nullopt;
  /// The layer norms' eps.
  LOCUS_ARG(double, layer_norm_eps) = 1e-5;
  /// Inputs [N, L, E] instead of [L, N, E].
  LOCUS_ARG(bool, batch_first) = false;
  /// Pre-norm layers.
  LOCUS_ARG(bool, norm_first) = false;
};

/// The encoder-decoder model of "Attention Is All You Need", as PyTorch's nn.Transformer:
/// an encoder stack and a decoder stack, each with a final LayerNorm; every parameter of two or
/// more dims drawn with xavier_uniform_. ValueError for d_model not divisible by nhead.
class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  /// A model with `options`.
  explicit TransformerImpl(TransformerOptions options = {});
  /// The decoder's output over the encoder's memory of src: tgt's shape. ShapeError when src
  /// and tgt differ in batch size or in features.
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  /// Registers the encoder and the decoder.
  void reset() override;
  /// xavier_uniform_ on every parameter of two or more dims, as PyTorch's _reset_parameters.
  void reset_parameters();
  /// The float mask [sz, sz] with -inf above the diagonal and 0 elsewhere: position i attends to
  /// positions <= i. Float32 on the CPU unless `options` say otherwise.
  static Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});
  /// The options the model was built with.
  TransformerOptions options;
  /// The encoder stack.
  TransformerEncoder encoder{nullptr};
  /// The decoder stack.
  TransformerDecoder decoder{nullptr};
};
LOCUS_MODULE(Transformer);

}  // namespace locus::nn

LOCUS_API_END
