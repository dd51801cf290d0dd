#include "src/ops/elementwise_checks.h"

#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/runtime/device_runtime.h"

namespace locus::ops {

void refuse_bool_sub() {
  throw DTypeError(op_prefix(OpId::Sub) + "subtraction, the `-` operator, with a bool tensor or a bool number is not supported; "
                   "use the `^` operator or logical_xor() for bools, or convert with .to(kInt64) first");
}

void refuse_alpha(OpId op, bool floating) {
  if (floating)
    throw DTypeError(op_prefix(op) + "for integral input tensors, argument alpha must not be a floating point number");
  throw DTypeError(op_prefix(op) + "boolean alpha only supported for boolean results");
}

// PyTorch refuses a bool on either side, not only two bool tensors.
void bool_alpha_and_operands(const CheckedCall& c) {
  bool any_bool = c.scalars.has_other && c.scalars.other.is_bool();
  for (int i = 0; i < c.ninputs; ++i) any_bool = any_bool || c.inputs[i]->dtype() == DType::Bool;
  if (any_bool) refuse_bool_sub();
  alpha_fits(c);
}

void integer_exponent(const CheckedCall& c) {
  if (c.scalars.has_other && !is_floating_point(c.dtypes.compute) && c.scalars.other.is_integral() &&
      c.scalars.other.to_int64() < 0)
    throw ValueError(op_prefix(OpId::Pow) + "integers to negative integer powers are not allowed");
}

// Integer division by zero: PyTorch raises ZeroDivisionError on the CPU, and so does Locus on
// every device whose memory the host can read without waiting for a device (cpu, sim); on CUDA
// the functor gives 0 instead of trapping (docs/design.md).
void nonzero_divisor(const CheckedCall& c) {
  if (is_floating_point(c.dtypes.compute)) return;
  if (c.scalars.has_other) {
    if (c.scalars.other.to_int64() == 0) throw ValueError(op_prefix(c.op) + "ZeroDivisionError: integer division by zero");
    return;
  }
  const Tensor& b = *c.inputs[1];
  if (!runtime::runtime(c.device.type()).capabilities().host_addressable || b.numel() == 0) return;
  NoGradGuard no_grad;
  if (eq(b, 0).sum().item<int64_t>() > 0) throw ValueError(op_prefix(c.op) + "ZeroDivisionError: integer division by zero");
}

}  // namespace locus::ops
