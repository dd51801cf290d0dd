// cross_entropy's fused form: the logits flattened to [M, C] once, one kernel for the per-row
// losses (targets checked in the same pass), the reduction, and one kernel for the gradient.

#include "src/ops/cross_entropy.h"

#include <array>
#include <cmath>

#include "locus/autograd.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/core/device_ordinal.h"
#include "src/ops/class_layout.h"
#include "src/ops/deferred_check.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/structured_call.h"
#include "src/runtime/device_runtime.h"

namespace locus::ops {
namespace {

using nn::Reduction;

DType lse_dtype(DType dtype) { return dtype == DType::Float64 ? DType::Float64 : DType::Float32; }

}  // namespace

std::optional<Tensor> fused_cross_entropy(const Tensor& logits, const Tensor& target, Reduction reduction,
                                          int64_t ignore_index, std::function<Tensor(const Tensor&)> composed) {
  const StructuredCall call(OpId::CrossEntropy, {{logits, "input"}, {target, "target"}});
  const Device device = call.device();
  const DType dtype = logits.dtype();
  if (!is_floating_point(dtype) || !runtime::runtime(device.type()).capabilities().host_addressable) return std::nullopt;
  // The kernel stands for log_softmax too: a device configured without it composes.
  const KernelTable* k = call.fused(&KernelTable::cross_entropy, dtype, {OpId::LogSoftmax});
  if (!k || !k->cross_entropy_grad) return std::nullopt;
  const Tensor x = class_rows(logits.detach()).contiguous();
  const Tensor t = target.reshape({-1}).contiguous();
  const int64_t m = x.size(0), c = x.size(1);
  const Tensor losses = empty_on(Shape{m}, dtype, device);
  const Tensor lse = empty_on(Shape{m}, lse_dtype(dtype), device);
  int64_t bad_row = -1, counted = 0;
  CrossEntropyRows rows;
  rows.device = detail::ordinal(device);
  rows.dtype = dtype;
  rows.m = m, rows.c = c;
  rows.ignore = ignore_index;
  if (m > 0) {
    wait_for_host(x);
    wait_for_host(t);
    rows.logits = dense_operand(x);
    rows.target = dense_operand<int64_t>(t);
    CrossEntropyArgs a{rows};
    a.losses = dense_result(losses);
    a.lse = dense_result(lse);
    a.bad_target = &bad_row;
    a.counted = &counted;
    k->cross_entropy(a);
  }
  if (bad_row >= 0)
    raise_failed_check(OpId::CrossEntropy, CheckKind::TargetOutOfBounds,
                            dense_operand<int64_t>(t)[bad_row], c, device, false);
  Tensor out;
  {
    NoGradGuard no_grad;
    switch (reduction) {
      case Reduction::None: out = losses.reshape(class_target_shape(logits)); break;
      case Reduction::Sum: out = losses.sum(); break;
      default:  // the mean over the targets that count; NaN when none does (as PyTorch)
        out = counted > 0 ? div(losses.sum(), static_cast<double>(counted)) : full({}, NAN, TensorOptions().dtype(dtype).device(device));
    }
  }
  if (!call.needs_grad()) return out;
  const Shape logits_shape = logits.shape();
  // `rows` points into x and t: the node holds them, so the backward reads the same rows.
  autograd::FunctionNode& node = autograd::record(out, "NllLossBackward0", [=, held_rows = std::array{x, t}](const Tensor& g) -> std::vector<Tensor> {
    // Each row's factor: the output gradient, over the count for a mean (0 when nothing counts:
    // every row is ignored then, and PyTorch's gradient is 0).
    Tensor scale;
    if (reduction == Reduction::None) scale = g.reshape({-1}).contiguous();
    else if (reduction == Reduction::Sum) scale = g.contiguous();
    else scale = counted > 0 ? div(g, static_cast<double>(counted)) : mul(g, 0.0);
    const Tensor grad = empty_on(Shape{m, c}, dtype, device);
    if (m > 0 && c > 0) {
      wait_for_host(scale);
      CrossEntropyGradArgs a{rows};
      a.lse = dense_operand(lse);
      a.scale = dense_operand(scale);
      a.scale_stride = reduction == Reduction::None ? 1 : 0;
      a.grad_logits = dense_result(grad);
      k->cross_entropy_grad(a);
    }
    return {from_class_rows(grad, logits_shape)};
  }, {&logits}, {{x, logits}});
  node.recompute_with({logits}, [composed = std::move(composed)](const std::vector<Tensor>& in) { return composed(in[0]); });
  return out;
}

}  // namespace locus::ops
