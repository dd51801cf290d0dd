#include "src/ops/structured_call.h"

#include <sstream>
#include <string>

#include "locus/errors.h"
#include "src/autograd/node.h"

namespace locus::ops {
namespace {

// PyTorch's can_cast: no floating to integral, no non-bool to bool.
bool castable(DType from, DType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

}  // namespace

Tensor StructuredCall::checked_out(const Shape& shape, DType dtype) const {
  if (out_.device() != device_) throw DeviceMismatchError(device_, out_.device(), "out", error_name(op_));
  if (!(out_.shape() == shape)) {
    std::ostringstream os;
    os << op_prefix(op_) << "out has shape " << out_.shape() << ", but the result has shape " << shape;
    throw ShapeError(os.str());
  }
  if (!castable(dtype, out_.dtype()))
    throw DTypeError(op_prefix(op_) + "result type " + std::string(dtype_name(dtype)) +
                     " can't be cast to the desired output type " + std::string(dtype_name(out_.dtype())));
  autograd::prepare_write(out_, error_name(op_));  // the public op's name (mm, not matmul)
  for (int i = 0; i < ninputs_; ++i)
    if (autograd::needs_grad({inputs_[i]}))
      throw ValueError(op_prefix(op_) + "the out= form is not differentiable, and an input requires grad; use the "
                                        "out-of-place form");
  if (out_.dtype() == dtype && out_.is_contiguous()) {
    wait_for_host(out_);
    return out_;
  }
  return empty_on(shape, dtype, device_);
}

Tensor StructuredCall::into_out(const Tensor& result) const {
  if (result.is_same(out_)) return out_;
  Tensor target = out_;
  target.copy_(result);
  return target;
}

}  // namespace locus::ops
