#pragma once
// The argument checks every process group makes before sending anything, so a wrong call
// raises on the calling rank and leaves the group usable, with the same message whatever the
// engine.

#include <cstdint>
#include <vector>

#include "locus/distributed.h"
#include "locus/export.h"

// Exported for the backend modules (Note [Export table]); not public API.
LOCUS_API_BEGIN

namespace locus::distributed {

/// ValueError "<op>: the tensor is undefined".
void check_defined(const Tensor& t, const char* op);
/// ValueError unless 0 <= root < size.
void check_root(int root, int size, const char* op);
/// ValueError unless `parts` has `size` tensors; ShapeError unless each is defined with the
/// shape and dtype of `like`. `what` names the list ("outputs").
void check_parts(const std::vector<Tensor>& parts, const Tensor& like, int size, const char* op, const char* what);
/// For the flat collectives: ShapeError unless `whole` is contiguous, of part's dtype, with
/// size x part.numel() elements. `what` names `whole` ("output").
void check_flat(const Tensor& whole, const Tensor& part, int size, const char* op, const char* what);
/// all_gather_into_tensor's checks on every engine (both tensors defined, then check_flat);
/// returns the collective's volume (Note [Collective volume]).
int64_t check_all_gather_into_tensor(const Tensor& output, const Tensor& input, int size);
/// reduce_scatter_tensor's checks on every engine (both tensors defined, check_flat, then
/// check_reduce_op); returns the collective's volume.
int64_t check_reduce_scatter_tensor(const Tensor& output, const Tensor& input, ReduceOp op, int size);
/// DTypeError for ReduceOp::Avg on a tensor that is not floating.
void check_reduce_op(ReduceOp reduce, const Tensor& t, const char* op);

}  // namespace locus::distributed

LOCUS_API_END
