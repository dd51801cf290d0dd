#pragma once
/// \file embedding.h
/// nn::Embedding, a learnable lookup table (state_dict: weight), and Embedding::from_pretrained.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string>

#include "locus/arg.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/functional/embedding.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"

namespace locus::nn {

/// Options of nn::Embedding: `EmbeddingOptions(vocab, 128).padding_idx(0)`.
struct EmbeddingOptions {
  /// The table's rows and columns.
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  /// The number of rows (the vocabulary's size).
  LOCUS_ARG(int64_t, num_embeddings);
  /// The size of each row.
  LOCUS_ARG(int64_t, embedding_dim);
  /// The row initialised to 0 whose gradient stays 0 (negative: counted from the end).
  LOCUS_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  /// See F::EmbeddingFuncOptions::max_norm.
  LOCUS_ARG(std::optional<double>, max_norm) = std::nullopt;
  /// The p of max_norm's p-norm.
  LOCUS_ARG(double, norm_type) = 2.0;
  /// Divide each row's gradient by its frequency in the batch.
  LOCUS_ARG(bool, scale_grad_by_freq) = false;
  /// Sparse gradients: not supported (Locus has no sparse tensors); true is a NotImplementedError.
  LOCUS_ARG(bool, sparse) = false;
  /// The initial table, [num_embeddings, embedding_dim] (undefined: N(0, 1) draws).
  LOCUS_ARG(Tensor, _weight);
};

/// A lookup table: forward(ids) is F::embedding(ids, weight, ...). The weight starts N(0, 1)
/// with the padding row 0, as PyTorch's. ValueError for non-positive sizes or a padding_idx out
/// of range; ShapeError for a _weight of another shape.
class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  /// A table with `options`.
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  /// `nn::Embedding(num_embeddings, embedding_dim)`.
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  /// F::embedding with the layer's options.
  Tensor forward(const Tensor& input) override;
  /// Registers weight (options._weight when given).
  void reset() override;
  /// N(0, 1), the padding row 0.
  void reset_parameters();
  /// PyTorch's "1000, 128, padding_idx=0".
  std::string extra_repr() const override;
  /// The options the layer was built with (padding_idx made non-negative).
  EmbeddingOptions options;
  /// The table, [num_embeddings, embedding_dim].
  Tensor weight;
};

/// Options of Embedding::from_pretrained.
struct EmbeddingFromPretrainedOptions {
  /// Keep the table fixed (weight does not require grad).
  LOCUS_ARG(bool, freeze) = true;
  /// As EmbeddingOptions's.
  LOCUS_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  /// As EmbeddingOptions's.
  LOCUS_ARG(std::optional<double>, max_norm) = std::nullopt;
  /// As EmbeddingOptions's.
  LOCUS_ARG(double, norm_type) = 2.0;
  /// As EmbeddingOptions's.
  LOCUS_ARG(bool, scale_grad_by_freq) = false;
  /// As EmbeddingOptions's.
  LOCUS_ARG(bool, sparse) = false;
};

/// The handle of EmbeddingImpl, with from_pretrained.
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  /// From a handle of the same module.
  Embedding(const ModuleHolder<EmbeddingImpl>& other) : ModuleHolder<EmbeddingImpl>(other) {}
  LOCUS_HANDLE_TO_METHODS(Embedding)
  /// A table whose weight is `embeddings` itself (2-d, ValueError otherwise; shared, as
  /// PyTorch's), trainable unless `freeze`.
  static Embedding from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& options = {});
};

}  // namespace locus::nn

LOCUS_API_END
