// The reduction and argument checks the elementwise losses share.

#include "src/nn/loss_common.h"

#include <sstream>

#include "locus/errors.h"
#include "locus/ops.h"
#include "src/core/public_op.h"

namespace locus::nn::loss_checks {

Tensor reduce_loss(const Tensor& losses, Reduction reduction) {
  switch (reduction) {
    case Reduction::Sum: return losses.sum();
    case Reduction::None: return losses;
    default: return losses.mean();
  }
}

void check_same_shape(const char* loss, const Tensor& input, const Tensor& target) {
  if (input.shape() == target.shape()) return;
  std::ostringstream os;
  os << detail::error_prefix(loss) << "Using a target size (" << target.shape()
     << ") that is different to the input size (" << input.shape()
     << ") is not supported: Locus's losses do not broadcast (a model's [N, 1] output against a [N] target would "
        "compare every output with every target); give both the same shape (reshape, squeeze or expand_as)";
  throw ShapeError(os.str());
}

DType floating_common_dtype(const char* loss, const Tensor& input, const Tensor& target) {
  const DType dtype = result_type(input, target);
  if (!is_floating_point(dtype))
    throw DTypeError(detail::error_prefix(loss) + "needs a floating input or target, got " +
                     std::string(dtype_name(input.dtype())) + " and " + std::string(dtype_name(target.dtype())) +
                     "; convert with .to(kFloat32)");
  return dtype;
}

void check_dtype(const char* loss, const char* what, const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return;
  throw DTypeError(detail::error_prefix(loss) + "expected " + what + " of dtype " + std::string(dtype_name(dtype)) +
                   " (the input's), got " + std::string(dtype_name(t.dtype())) + "; convert with .to(dtype)");
}

void check_broadcasts_to(const char* loss, const char* what, const Tensor& t, const Shape& shape) {
  bool ok = t.dim() <= static_cast<int64_t>(shape.size());
  for (int64_t i = 1; ok && i <= t.dim(); ++i) {
    const int64_t have = t.size(-i), want = shape[shape.size() - i];
    ok = have == want || have == 1;
  }
  if (ok) return;
  std::ostringstream os;
  os << detail::error_prefix(loss) << "the size of " << what << " " << t.shape()
     << " must broadcast to the input's " << shape;
  throw ShapeError(os.str());
}

}  // namespace locus::nn::loss_checks
