#pragma once
/// \file embedding.h
/// Lookup tables of torch.nn.functional: F::embedding.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus::nn::functional {

/// Options of F::embedding: `F::EmbeddingFuncOptions().padding_idx(0)`.
struct EmbeddingFuncOptions {
  /// The row whose gradient stays 0 (negative: counted from the end).
  LOCUS_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  /// Rows looked up whose norm exceeds this are rescaled to it in place, first.
  LOCUS_ARG(std::optional<double>, max_norm) = std::nullopt;
  /// The p of max_norm's p-norm.
  LOCUS_ARG(double, norm_type) = 2.0;
  /// Divide each row's gradient by how often it occurs in the input.
  LOCUS_ARG(bool, scale_grad_by_freq) = false;
  /// Sparse gradients: Locus has no sparse tensors, so true is a NotImplementedError.
  LOCUS_ARG(bool, sparse) = false;
};

/// As F.embedding: the rows of weight [num_embeddings, embedding_dim] at the int64/int32 ids of
/// `input`, shaped input.shape() + [embedding_dim]. The gradient adds each id's output gradients
/// into its row (padding_idx's row gets none; on the CPU in a fixed order). With max_norm, the
/// looked-up rows of weight are renormalised in place first (weight / (norm + 1e-7) * max_norm
/// where the norm exceeds max_norm), as PyTorch's embedding_renorm_. DTypeError for
/// floating ids; an id outside [0, num_embeddings) is an IndexError naming the id and the table
/// size (checked on the device, without waiting for it); ValueError for a padding_idx outside
/// [-num_embeddings, num_embeddings) or a weight that is not 2-d.
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options = {});

}  // namespace locus::nn::functional

LOCUS_API_END
