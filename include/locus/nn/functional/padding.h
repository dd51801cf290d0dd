#pragma once
/// \file padding.h
/// F::pad, as LibTorch's `torch::nn::functional::pad` (`namespace F = locus::nn::functional;`).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <vector>

#include "locus/arg.h"
#include "locus/tensor.h"

namespace locus {
namespace nn::functional {
/// How F::pad fills the new elements.
enum class PadMode {
  Constant,   ///< a constant value
  Reflect,    ///< the input mirrored about its edge element: `[1, 2, 3]` by 2 is `[3, 2, 1, 2, 3, 2, 1]`
  Replicate,  ///< the edge element repeated
  Circular,   ///< the input wrapped around: `[1, 2, 3]` by 2 is `[2, 3, 1, 2, 3, 1, 2]`
};
}  // namespace nn::functional

/// LibTorch's mode constants: `F::PadFuncOptions({1, 1}).mode(kReflect)`.
inline constexpr nn::functional::PadMode kConstant = nn::functional::PadMode::Constant;
/// Mirror padding.
inline constexpr nn::functional::PadMode kReflect = nn::functional::PadMode::Reflect;
/// Edge padding.
inline constexpr nn::functional::PadMode kReplicate = nn::functional::PadMode::Replicate;
/// Wrap-around padding.
inline constexpr nn::functional::PadMode kCircular = nn::functional::PadMode::Circular;
/// A convolution's default padding_mode: zeros, which is constant padding with 0.
inline constexpr nn::functional::PadMode kZeros = nn::functional::PadMode::Constant;

namespace nn::functional {

/// Options of F::pad: `PadFuncOptions({left, right, top, bottom}).mode(kReflect).value(0)`.
struct PadFuncOptions {
  /// The pad sizes, two per dim from the last dim backwards (negative sizes crop).
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}
  /// Pairs (before, after) for the last dim, then the one before it, and so on.
  LOCUS_ARG(std::vector<int64_t>, pad);
  /// Constant (the default), reflect, replicate or circular.
  LOCUS_ARG(PadMode, mode) = PadMode::Constant;
  /// The fill of constant padding.
  LOCUS_ARG(double, value) = 0;
};

/// The input padded as torch.nn.functional.pad (PyTorch 1.13's rules): constant pads any dims,
/// negative sizes crop; reflect, replicate and circular pad the last 1, 2 or 3 dims of a tensor with one
/// or two more dims (batch, channel), reflect needs each pad smaller than the dim; circular
/// pads exactly the dims after [N, C], each by at most its size (negative sizes crop first).
/// ValueError for an odd pad list or one longer than twice the dims. Differentiable.
Tensor pad(const Tensor& input, const PadFuncOptions& options);

/// Int64 class indices as one-hot rows: a new last dim of `num_classes` (-1: the largest
/// index + 1) holding 1 at the index (int64), as F.one_hot. DTypeError for a non-int64 input;
/// ValueError for a negative index or one >= num_classes.
Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1);

}  // namespace nn::functional
}  // namespace locus

LOCUS_API_END
