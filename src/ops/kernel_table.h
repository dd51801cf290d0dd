#pragma once
// The kernel table: what a backend provides, per op family. Front ends in src/ops/ compute
// the strided description (StridedIter and friends); backends only loop.

#include <cstdint>

#include "locus/dtype.h"
#include "locus/scalar.h"
#include "locus/shape.h"
#include "src/ops/op_id.h"

namespace locus::ops {

/// Up to four operands over one iteration shape, with byte strides per operand (0 where an
/// operand is broadcast). Operand 0 is the output. Dims are coalesced: adjacent dims that are
/// contiguous for every operand are merged, so a contiguous op has ndim 1.
struct StridedIter {
  static constexpr int kMaxOperands = 4;
  int noperands = 0;
  Shape shape;                       ///< iteration shape (innermost last)
  Shape strides[kMaxOperands];       ///< byte strides per operand
  char* data[kMaxOperands] = {};     ///< first element of each operand
  DType dtypes[kMaxOperands] = {};   ///< element type of each operand
  int64_t numel = 0;
  int device = 0;                    ///< index of the device the operands live on
  /// True when every operand is contiguous over the whole range (one dim, unit strides).
  bool contiguous() const noexcept;
};

/// Reduction over some dims of a contiguous-or-strided input into an output.
/// The input is described over its full shape; `out_strides` are byte strides of the output
/// with 0 on reduced dims, so out[index] accumulates all input elements mapping to it.
struct ReduceArgs {
  OpId op;                 ///< Sum, Mean, Max, Min, Argmax
  int device = 0;          ///< index of the device the operands live on
  DType in_dtype, out_dtype;
  const char* in = nullptr;
  char* out = nullptr;     ///< values (Sum/Mean/Max/Min) or int64 indices (Argmax)
  char* indices = nullptr; ///< optional int64 indices for Max/Min along a dim
  Shape shape;             ///< input shape (coalesced)
  Shape in_strides;        ///< bytes
  Shape out_strides;       ///< bytes, 0 on reduced dims
  Shape index_strides;     ///< bytes of the indices output (same layout as out)
  int64_t out_numel = 0;
  int64_t reduce_numel = 0; ///< elements folded into each output
  /// For Argmax/Max/Min along one dim: the element stride (not bytes) of that dim in a flat
  /// index, so indices count positions along the dim. Full reductions use flat positions.
  int64_t index_dim_size = 0;
};

/// Batched matrix product C[b] = A[b] @ B[b] with element strides; C is contiguous.
struct MatmulArgs {
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const char* a = nullptr; int64_t a_batch_stride = 0, a_row = 0, a_col = 0;
  const char* b = nullptr; int64_t b_batch_stride = 0, b_row = 0, b_col = 0;
  char* c = nullptr;       int64_t c_batch_stride = 0;  ///< C rows are n elements apart
};

/// Softmax or log-softmax along the middle dim of a contiguous [outer, dim, inner] block.
struct SoftmaxArgs {
  int device = 0;  ///< index of the device the operands live on
  bool log = false;
  DType dtype;
  const char* in = nullptr;
  char* out = nullptr;
  int64_t outer = 0, dim = 0, inner = 0;
};

/// out = input gathered along `dim` by int64 indices (both index_select and gather). The input
/// and output are contiguous; for index_select `index` has `out_dim` entries, for gather it is
/// a contiguous tensor of the output's shape.
struct IndexArgs {
  OpId op;  ///< IndexSelect or Gather
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  const char* in = nullptr;
  char* out = nullptr;
  const int64_t* index = nullptr;
  int64_t outer = 0, in_dim = 0, out_dim = 0, inner = 0;
};

/// Counter-based random fill of a contiguous buffer (Philox 4x32-10, seed plus offset), so the
/// same seed gives the same values on every device.
struct RandomArgs {
  OpId op;  ///< Rand, Randn, Randint, Arange
  int device = 0;  ///< index of the device the output lives on
  DType dtype;
  char* out = nullptr;
  int64_t numel = 0;
  uint64_t seed = 0, offset = 0;
  double low = 0, high = 1;  ///< randint bounds, or arange start/step
};

/// The kernels one device type provides. Every pointer is set for a full backend.
struct KernelTable {
  /// Binary op over iter (out, a, b); a and b have the compute dtype, out has it too or bool
  /// for comparisons. `alpha` scales b for Add/Sub.
  void (*binary)(OpId op, const StridedIter& it, const Scalar& alpha);
  /// Binary op with a scalar b: iter (out, a).
  void (*binary_scalar)(OpId op, const StridedIter& it, const Scalar& b, const Scalar& alpha);
  /// Unary op over iter (out, in), same floating dtype; Clamp takes lo/hi (absent = NaN-free).
  void (*unary)(OpId op, const StridedIter& it, const Scalar& lo, const Scalar& hi, bool has_lo, bool has_hi);
  /// iter (out, cond(bool), a, b).
  void (*where)(const StridedIter& it);
  /// iter (out, in): converts the dtype while copying; both on this device.
  void (*copy)(const StridedIter& it);
  /// iter (out): sets every element.
  void (*fill)(const StridedIter& it, const Scalar& value);
  void (*reduce)(const ReduceArgs& args);
  void (*softmax)(const SoftmaxArgs& args);
  void (*matmul)(const MatmulArgs& args);
  void (*index)(const IndexArgs& args);
  void (*random)(const RandomArgs& args);
};

}  // namespace locus::ops
