// Note [Op path]
// Every elementwise op runs through call(), the one place that does, in this order:
//   0. autocast, when a guard is on (Note [Autocast] in src/ops/autocast.h);
//   1. the device rule: all tensor operands on one device (a 0-dim CPU tensor may join);
//   2. the dtype rule: PyTorch's result_type of the operands, then the op's rule from the op
//      table (src/ops/dtype_rules.h) gives the compute and result dtypes, or a DTypeError; then
//      the op's own refusals, its line of LOCUS_ELEMENTWISE_CHECKS (sub's bools, add's alpha,
//      pow's negative integer exponent, integer division by zero);
//   3. broadcasting of the shapes;
//   4. for the in-place and out= forms: the output's device, shape and dtype, and the
//      grad-mode rules (no writing into a tensor that autograd would have to record);
//   5. the kernel of the device (kernels_for), or the CPU fallback (run_on_cpu);
//   6. the inputs cast to the compute dtype, the output allocated (or the given one used);
//   7. the kernel call over the strided description (make_iter);
//   8. the graph: the op's derivative from the op table, recorded when an input needs grad.
// Structured ops (reductions, softmax, matmul, indexing) do the same steps with their own
// shapes, through the same helpers (dispatch.h). docs/design.md draws the path.

#include "src/ops/elementwise_call.h"

#include <sstream>
#include <string>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/autocast.h"
#include "src/ops/dispatch.h"
#include "src/ops/dtype_rules.h"
#include "src/ops/elementwise_checks.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/strided_iter.h"
#include "src/ops/type_promotion.h"

namespace locus::ops {
namespace {

// One call: up to three tensor inputs (where's condition first), a scalar second operand or
// bounds, and the optional output of the in-place and out= forms.
struct Call {
  OpId op;
  const Tensor* inputs[3] = {};
  const char* names[3] = {};
  int ninputs = 0;
  ElementwiseScalars scalars = {};
  Tensor out = {};
};

// Note [Channels-last outputs]
// An elementwise result of 4 or 5 dims is channels-last (MemoryFormat::ChannelsLast or
// ChannelsLast3d) when one of its operands of the result's full shape is stored that way, so
// that batch norm, ReLU and residual adds between two convolutions keep NHWC, forward and
// backward, and the next convolution reads it without a reorder (Note [Channels-last
// convolutions]). Broadcast and expanded operands (a stride 0) do not choose. PyTorch lets the
// first operand that tells the dims apart decide, so a contiguous gradient (a mean's, spread
// back over the pixels) added to a channels-last one stays contiguous there, and every layer
// below pays a reorder; here channels-last wins wherever it appears. The values are the same
// either way; only the strides differ (docs/design.md). Any other result is contiguous: Locus
// does not follow PyTorch's general stride permutation (a transposed input gives a contiguous
// result).
MemoryFormat output_format(const Call& c, const Shape& shape) {
  if (shape.size() != 4 && shape.size() != 5) return MemoryFormat::Contiguous;
  for (int i = 0; i < c.ninputs; ++i) {
    const Tensor& t = *c.inputs[i];
    if (t.shape() != shape || t.is_contiguous()) continue;
    const MemoryFormat format = t.suggest_memory_format();
    if (format != MemoryFormat::Contiguous) return format;
  }
  return MemoryFormat::Contiguous;
}

// PyTorch's can_cast: no floating to integral, no non-bool to bool.
bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

Tensor call(Call& c);

// The in-place form of an op whose operands are in the graph (`h.relu_()`, `y.mul_(w)`):
// recorded as the out-of-place op written back (Note [In-place ops in the graph]).
bool recorded_in_place(Call& c) {
  if (c.inputs[0]->impl() != c.out.impl() || c.op == OpId::Where) return false;
  const Tensor* other = c.ninputs > 1 ? c.inputs[1] : nullptr;
  return autograd::record_in_place(c.out, op_name(c.op), {other ? other : c.inputs[0]}, [&c] {
    Call out_of_place = c;
    out_of_place.out = Tensor();
    return call(out_of_place);
  });
}

// Step 4: the output of the in-place and out= forms. True when the in-place form was recorded
// (and so is done).
bool check_out(Call& c, const Shape& shape, DType result, Device device) {
  const Tensor& out = c.out;
  if (out.device() != device) throw DeviceMismatchError(device, out.device(), "out", std::string(op_name(c.op)));
  if (!(out.shape() == shape)) {
    std::ostringstream os;
    os << op_prefix(c.op) << "output with shape " << out.shape() << " doesn't match the broadcast shape " << shape;
    throw ShapeError(os.str());
  }
  if (!can_cast(result, out.dtype()))
    throw DTypeError(op_prefix(c.op) + "result type " + std::string(dtype_name(result)) +
                     " can't be cast to the desired output type " + std::string(dtype_name(out.dtype())));
  if (recorded_in_place(c)) return true;
  autograd::prepare_write(out, op_name(c.op));
  require_distinct_elements(out, op_prefix(c.op));
  for (int i = 0; i < c.ninputs; ++i) require_no_partial_overlap(out, *c.inputs[i], op_prefix(c.op));
  for (int i = 0; i < c.ninputs; ++i)
    if (autograd::needs_grad({c.inputs[i]}))
      throw ValueError(op_prefix(c.op) + "the out= form is not differentiable, and an input requires grad; use the "
                                         "out-of-place form");
  return false;
}

// PyTorch's result_type of the tensors from `first` on and of the numbers among the scalars.
DType common_dtype(const Call& c, int first) {
  const int count = c.ninputs - first;
  if (!c.scalars.has_other && !c.scalars.has_lo && !c.scalars.has_hi) {
    if (count == 1) return c.inputs[first]->dtype();
    if (count == 2 && c.inputs[first]->dtype() == c.inputs[first + 1]->dtype()) return c.inputs[first]->dtype();
  }
  Scalar numbers[3];
  int nnumbers = 0;
  if (c.scalars.has_other) numbers[nnumbers++] = c.scalars.other;
  if (c.scalars.has_lo) numbers[nnumbers++] = c.scalars.lo;
  if (c.scalars.has_hi) numbers[nnumbers++] = c.scalars.hi;
  return promote_operands(c.inputs + first, count, numbers, nnumbers);
}

// The fallback runs the same call on CPU copies of the inputs.
Tensor fall_back(Call& c, Device device) {
  Call on_cpu = c;
  Tensor copies[3];
  for (int i = 0; i < c.ninputs; ++i) copies[i] = c.inputs[i]->cpu(), on_cpu.inputs[i] = &copies[i];
  on_cpu.out = Tensor();
  Tensor r = run_on_cpu(device, [&] { return call(on_cpu); });
  return c.out.defined() ? c.out.copy_(r) : r;
}

// The float32 list's elementwise ops (exp, log, pow, ...) under autocast (Note [Autocast]).
Tensor call_under_autocast(Call& c) {
  Tensor cast[3];
  for (int i = 0; i < c.ninputs; ++i) cast[i] = autocast_input(CastPolicy::Float32, *c.inputs[i]), c.inputs[i] = &cast[i];
  const AutocastExclusion excluded;
  return call(c);
}

Tensor call(Call& c) {
  // 0. autocast: the in-place and out= forms keep their output's dtype, as in PyTorch
  if (autocast_active() && !c.out.defined() && autocast_policy(c.op) == CastPolicy::Float32) return call_under_autocast(c);
  // 1. the device rule
  Operand operands[3] = {{*c.inputs[0], c.names[0]}, {*c.inputs[c.ninputs > 1 ? 1 : 0], c.names[1]},
                         {*c.inputs[c.ninputs > 2 ? 2 : 0], c.names[2]}};
  const Device device = common_device(c.op, operands, c.ninputs);
  // 2. the dtype rule (where's condition does not promote)
  const bool is_where = c.op == OpId::Where;
  const int first = is_where ? 1 : 0;
  if (is_where && c.inputs[0]->dtype() != DType::Bool)
    throw DTypeError(op_prefix(OpId::Where) + "condition must be a bool tensor, got " + std::string(dtype_name(c.inputs[0]->dtype())));
  const DType common = common_dtype(c, first);
  const ElementwiseDtypes dt = is_where ? ElementwiseDtypes{common, common} : resolve_dtypes(c.op, common);
  // the op's own refusals beyond its dtype rule (the op table's LOCUS_ELEMENTWISE_CHECKS)
  check_elementwise(c.op, c.inputs, c.ninputs, c.scalars, dt, device);
  // 3. broadcasting (no Shape is built when the operands already agree)
  Shape broadcast;
  const Shape* shape = &c.inputs[0]->shape();
  for (int i = 1; i < c.ninputs; ++i) {
    if (c.inputs[i]->shape() == *shape) continue;
    broadcast = broadcast_shapes(*shape, c.inputs[i]->shape(), c.op);
    shape = &broadcast;
  }
  // 4. the in-place and out= forms
  if (c.out.defined() && check_out(c, *shape, dt.result, device)) return c.out;
  // 5. the kernel, or the fallback
  const ElementwiseKernel kernel = elementwise_kernel(c.op, device, dt.compute);
  if (!kernel) return fall_back(c, device);
  // 6. inputs in the compute dtype, the output
  // An input already on the device in the compute dtype is used as it is, without a copy of its
  // handle (most calls: docs/performance.md counts this path's instructions); one of another
  // dtype, or a CPU 0-dim operand of an op on another device, is converted.
  Tensor converted[3];
  const Tensor* iter_inputs[3];
  for (int i = 0; i < c.ninputs; ++i) {
    const DType want = is_where && i == 0 ? DType::Bool : dt.compute;
    const Tensor& given = *c.inputs[i];
    if (given.device() == device && given.dtype() == want) {
      iter_inputs[i] = &given;
    } else {
      converted[i] = given.device() == device ? given.to(want) : given.to(device, want);
      iter_inputs[i] = &converted[i];
    }
    wait_for_host(*iter_inputs[i]);
  }
  const bool direct = c.out.defined() && c.out.dtype() == dt.result;
  Tensor target = direct ? c.out : empty_on(*shape, dt.result, device, output_format(c, *shape));
  if (direct) wait_for_host(target);
  // 7. the kernel
  const StridedIter it = c.ninputs == 1   ? make_iter(target, {iter_inputs[0]})
                         : c.ninputs == 2 ? make_iter(target, {iter_inputs[0], iter_inputs[1]})
                                          : make_iter(target, {iter_inputs[0], iter_inputs[1], iter_inputs[2]});
  kernel(it, c.scalars);
  if (c.out.defined()) return direct ? c.out : c.out.copy_(target);
  // 8. the graph
  if (is_floating_point(dt.result) && is_grad_enabled()) {
    bool any = false;
    for (int i = 0; i < c.ninputs; ++i) any = any || c.inputs[i]->requires_grad();
    if (any) autograd::record_elementwise(c.op, c.inputs, c.ninputs, c.scalars, target);
  }
  return target;
}

}  // namespace

Tensor run_unary(OpId op, const Tensor& x, Tensor out, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  Call c{.op = op};
  c.inputs[0] = &x, c.names[0] = "self", c.ninputs = 1;
  c.out = std::move(out);
  if (lo) c.scalars.lo = *lo, c.scalars.has_lo = true;
  if (hi) c.scalars.hi = *hi, c.scalars.has_hi = true;
  return call(c);
}

Tensor run_unary(OpId op, const Tensor& x, Tensor out, const ElementwiseScalars& scalars) {
  Call c{.op = op};
  c.inputs[0] = &x, c.names[0] = "self", c.ninputs = 1;
  c.out = std::move(out);
  c.scalars = scalars;
  return call(c);
}

Tensor run_binary(OpId op, const Tensor& a, const Tensor& b, Tensor out, const Scalar& alpha) {
  Call c{.op = op};
  c.inputs[0] = &a, c.names[0] = "self";
  c.inputs[1] = &b, c.names[1] = "other";
  c.ninputs = 2;
  c.out = std::move(out);
  c.scalars.alpha = alpha;
  return call(c);
}

Tensor run_binary(OpId op, const Tensor& a, const Scalar& b, Tensor out, const Scalar& alpha) {
  Call c{.op = op};
  c.inputs[0] = &a, c.names[0] = "self", c.ninputs = 1;
  c.out = std::move(out);
  c.scalars.other = b, c.scalars.has_other = true;
  c.scalars.alpha = alpha;
  return call(c);
}

Tensor run_binary(OpId op, const Scalar& a, const Tensor& b) {
  if (op == OpId::Sub && (a.is_bool() || b.dtype() == DType::Bool)) refuse_bool_sub();
  // The number joins the dtype rule as a number; it then runs as a 0-dim tensor of that dtype.
  const Tensor* operand = &b;
  const DType compute = resolve_dtypes(op, promote_operands(&operand, 1, &a, 1)).compute;
  const Tensor first = full({}, a, TensorOptions().dtype(compute).device(b.device()));
  return run_binary(op, first, b.dtype() == compute ? b : b.to(compute));
}

Tensor run_where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  Call c{.op = OpId::Where};
  c.inputs[0] = &condition, c.names[0] = "condition";
  c.inputs[1] = &a, c.names[1] = "self";
  c.inputs[2] = &b, c.names[2] = "other";
  c.ninputs = 3;
  return call(c);
}

}  // namespace locus::ops
