// Lookup tables: F::embedding as index_select over the flattened ids with its own gradient
// node (padding_idx's row and scale_grad_by_freq), max_norm's in-place renormalisation, and
// nn::Embedding with from_pretrained.

#include "locus/nn/embedding.h"

#include <string>
#include <vector>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/public_op.h"
#include "src/nn/python_repr.h"
#include "src/ops/public_op.h"

namespace locus::nn {
namespace functional {
namespace {

using locus::detail::error_prefix;

// padding_idx within [-rows, rows), made non-negative; -1 for none.
int64_t padding_row(const char* where, std::optional<int64_t> padding_idx, int64_t rows) {
  if (!padding_idx) return -1;
  const int64_t p = *padding_idx;
  if (p >= rows || p < -rows)
    throw ValueError(std::string(where) + "Padding_idx must be within num_embeddings (got " + std::to_string(p) + " for " +
                     std::to_string(rows) + " rows)");
  return p < 0 ? rows + p : p;
}

void refuse_sparse(const char* where, bool sparse) {
  if (sparse)
    throw NotImplementedError(std::string(where) +
                              "sparse gradients are not supported: Locus has no sparse tensors (use sparse=false)");
}

// PyTorch's embedding_renorm_: each looked-up row whose p-norm exceeds max_norm is scaled by
// max_norm / (norm + 1e-7), in place and outside autograd. A row looked up twice is scaled once.
void renorm_rows(const Tensor& weight, const Tensor& ids, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  Tensor looked_up = zeros({weight.size(0)}, TensorOptions().dtype(kBool).device(weight.device()));
  looked_up.index_put_({ids}, true);
  const Tensor norms = norm(weight, norm_type, Shape{1});
  const Tensor scale = where(logical_and(looked_up, norms > max_norm), mul(reciprocal(add(norms, 1e-7)), max_norm), ones_like(norms));
  Tensor w = weight;
  w.mul_(scale.unsqueeze(1));
}

}  // namespace

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& o) {
  const ops::PublicOp op("embedding", {{input, "input"}, {weight, "weight"}});
  const std::string prefix = error_prefix("embedding");
  if (input.dtype() != kInt64 && input.dtype() != kInt32)
    throw DTypeError(prefix + "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
                     "but got " + std::string(dtype_name(input.dtype())) + " instead");
  if (weight.dim() != 2)
    throw ValueError(prefix + "weight must be 2-d [num_embeddings, embedding_dim], got " + std::to_string(weight.dim()) + " dims");
  refuse_sparse(prefix.c_str(), o.sparse());
  const int64_t rows = weight.size(0), dim = weight.size(1);
  const int64_t padding = padding_row(prefix.c_str(), o.padding_idx(), rows);
  const Tensor ids = input.reshape({-1}).to(kInt64);
  if (o.max_norm()) renorm_rows(weight, ids, *o.max_norm(), o.norm_type());
  Shape out_shape = input.shape();
  out_shape.push_back(dim);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = index_select(weight, 0, ids).view(out_shape);
  }
  if (!is_grad_enabled() || !weight.requires_grad()) return out;
  const Shape weight_shape = weight.shape();
  const bool by_freq = o.scale_grad_by_freq();
  autograd::record(out, "EmbeddingBackward0", [=](const Tensor& grad) -> std::vector<Tensor> {
    Tensor rows_grad = grad.reshape({-1, dim});
    if (padding >= 0) rows_grad = mul(rows_grad, (ids != padding).unsqueeze(1).to(rows_grad.dtype()));
    if (by_freq) {
      const Tensor ones_per_id = ones({ids.size(0)}, TensorOptions().dtype(rows_grad.dtype()).device(ids.device()));
      const Tensor counts = index_add(zeros({weight_shape[0]}, TensorOptions().dtype(rows_grad.dtype()).device(ids.device())), 0, ids,
                                      ones_per_id);
      rows_grad = div(rows_grad, index_select(counts, 0, ids).unsqueeze(1));
    }
    const Tensor table = zeros(weight_shape, TensorOptions().dtype(rows_grad.dtype()).device(rows_grad.device()));
    return {index_add(table, 0, ids, rows_grad)};
  }, {&weight}, {{ids, input}});
  return out;
}

}  // namespace functional

namespace {

void check_options(const EmbeddingOptions& o) {
  if (o.num_embeddings() <= 0 || o.embedding_dim() <= 0)
    throw ValueError("Embedding: num_embeddings and embedding_dim must be positive, got " + std::to_string(o.num_embeddings()) +
                     " and " + std::to_string(o.embedding_dim()));
}

}  // namespace

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o) : options(o) {
  check_options(o);
  if (o.padding_idx())
    options.padding_idx(functional::padding_row("Embedding: ", o.padding_idx(), o.num_embeddings()));
  functional::refuse_sparse("Embedding: ", o.sparse());
  reset();
}

void EmbeddingImpl::reset() {
  const Tensor given = options._weight();
  if (given.defined()) {
    if (given.shape() != Shape{options.num_embeddings(), options.embedding_dim()})
      throw ShapeError("Embedding: Shape of weight does not match num_embeddings and embedding_dim");
    weight = register_parameter("weight", given);
    return;
  }
  weight = register_parameter("weight", empty({options.num_embeddings(), options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  NoGradGuard no_grad;
  weight.normal_(0, 1);
  if (options.padding_idx()) weight[*options.padding_idx()].fill_(0);
}

Tensor EmbeddingImpl::forward(const Tensor& input) {
  return functional::embedding(input, weight, functional::EmbeddingFuncOptions()
                                                  .padding_idx(options.padding_idx())
                                                  .max_norm(options.max_norm())
                                                  .norm_type(options.norm_type())
                                                  .scale_grad_by_freq(options.scale_grad_by_freq())
                                                  .sparse(options.sparse()));
}

std::string EmbeddingImpl::extra_repr() const {
  std::string s = std::to_string(options.num_embeddings()) + ", " + std::to_string(options.embedding_dim());
  if (options.padding_idx()) s += ", padding_idx=" + std::to_string(*options.padding_idx());
  if (options.max_norm()) s += ", max_norm=" + detail::python_float(*options.max_norm());
  if (options.norm_type() != 2.0) s += ", norm_type=" + detail::python_float(options.norm_type());
  if (options.scale_grad_by_freq()) s += ", scale_grad_by_freq=True";
  if (options.sparse()) s += ", sparse=True";
  return s;
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, const EmbeddingFromPretrainedOptions& o) {
  if (embeddings.dim() != 2) throw ValueError("Embedding::from_pretrained: Embeddings parameter is expected to be 2-dimensional");
  Embedding e(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                  ._weight(embeddings)
                  .padding_idx(o.padding_idx())
                  .max_norm(o.max_norm())
                  .norm_type(o.norm_type())
                  .scale_grad_by_freq(o.scale_grad_by_freq())
                  .sparse(o.sparse()));
  e->weight.requires_grad_(!o.freeze());
  return e;
}

}  // namespace locus::nn
