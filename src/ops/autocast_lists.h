#pragma once
// PyTorch's three autocast lists, for the ops Locus has (Note [Autocast] in src/ops/autocast.h).
// They follow PyTorch's CUDA lists (docs: "Autocast Op Reference") on every device type, so a
// model computes the same way on cpu, sim and cuda; PyTorch's CPU lists keep softmax, exp, log,
// pow, sum and mean in the lower precision, which docs/design.md records as a deviation.

#include <cstdint>

#include "src/ops/op_id.h"

namespace locus::ops {

/// What autocast does with an op's floating tensors on an autocast device type.
enum class CastPolicy : uint8_t {
  Keep,            ///< on no list: runs in the dtypes it is given
  LowerPrecision,  ///< float32 (and the other lower precision) cast to the autocast dtype; float64 kept
  Float32,         ///< float16 and bfloat16 cast to float32
  Promote,         ///< mixed inputs run in the widest: these ops' own dtype rule already does it
};

/// The list `op` is on.
inline CastPolicy autocast_policy(OpId op) noexcept {
  switch (op) {
    // Products, where the lower precision is fast and accumulates in float32 anyway.
    case OpId::Matmul:  // matmul, mm, batched products
    case OpId::Linear:
    case OpId::Convolution:  // conv1d, conv2d, conv_transpose2d
    case OpId::ScaledDotProductAttention:
      return CastPolicy::LowerPrecision;
    // Ops whose range or accumulation needs float32.
    case OpId::Exp:
    case OpId::Expm1:
    case OpId::Log:
    case OpId::Log1p:
    case OpId::Rsqrt:
    case OpId::Reciprocal:
    case OpId::Log2:
    case OpId::Log10:
    case OpId::Tan:
    case OpId::Sinh:
    case OpId::Cosh:
    case OpId::Asin:
    case OpId::Acos:
    case OpId::Softplus:
    case OpId::Pow:
    case OpId::Softmax:
    case OpId::LogSoftmax:
    case OpId::Cumsum:
    case OpId::Cumprod:
    case OpId::CrossEntropy:
    case OpId::NllLoss:
    case OpId::MseLoss:
    case OpId::GroupNorm:
    case OpId::LayerNorm:
    case OpId::RmsNorm:
      return CastPolicy::Float32;
    // The reductions: the op table's Autocast column.
#define LOCUS_REDUCE_AUTOCAST(id, name, rule, cast, ...) \
  case OpId::id:                                         \
    return CastPolicy::cast;
      LOCUS_REDUCE_OPS(LOCUS_REDUCE_AUTOCAST)
#undef LOCUS_REDUCE_AUTOCAST
    // Ops that take several floating tensors: PyTorch's result_type picks the widest, as the
    // promote list asks, so autocast casts nothing for them.
    case OpId::Cat:
    case OpId::Stack:
    case OpId::Where:
      return CastPolicy::Promote;
    default:
      return op_family(op) == OpFamily::Binary ? CastPolicy::Promote : CastPolicy::Keep;
  }
}

}  // namespace locus::ops
