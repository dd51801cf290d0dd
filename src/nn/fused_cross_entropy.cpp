// cross_entropy's fused form: the logits flattened to [M, C] once, one kernel for the per-row
// losses (targets checked in the same pass), the reduction, and one kernel for the gradient.

#include "src/nn/fused_cross_entropy.h"

#include <cmath>

#include "locus/autograd.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/autograd/node.h"
#include "src/nn/class_layout.h"
#include "src/ops/deferred_check.h"
#include "src/ops/dispatch.h"
#include "src/ops/fused.h"
#include "src/ops/kernel_operand.h"
#include "src/runtime/device_runtime.h"

namespace locus::nn {
namespace {

using ops::OpId;

DType lse_dtype(DType dtype) { return dtype == DType::Float64 ? DType::Float64 : DType::Float32; }

}  // namespace

std::optional<Tensor> fused_cross_entropy(const Tensor& logits, const Tensor& target, const ClassLossOptions& options) {
  const Device device = logits.device();
  const DType dtype = logits.dtype();
  if (!is_floating_point(dtype) || !runtime::runtime(device.type()).capabilities().host_addressable) return std::nullopt;
  const ops::KernelTable* k =
      ops::fused_kernels(&ops::KernelTable::cross_entropy, device, dtype, {OpId::CrossEntropy, OpId::LogSoftmax});
  if (!k || !k->cross_entropy_grad) return std::nullopt;
  const Tensor x = class_rows(logits.detach()).contiguous();
  const Tensor t = target.reshape({-1}).contiguous();
  const int64_t m = x.size(0), c = x.size(1);
  const Tensor losses = ops::empty_on(Shape{m}, dtype, device);
  const Tensor lse = ops::empty_on(Shape{m}, lse_dtype(dtype), device);
  int64_t bad_row = -1, counted = 0;
  if (m > 0) {
    ops::CrossEntropyArgs a;
    a.device = device.is_cpu() ? 0 : device.index();
    a.dtype = dtype;
    a.m = m, a.c = c;
    ops::wait_for_host(x);
    ops::wait_for_host(t);
    a.logits = ops::dense_operand(x);
    a.target = ops::dense_operand<int64_t>(t);
    a.ignore = options.ignore_index();
    a.losses = ops::dense_result(losses);
    a.lse = ops::dense_result(lse);
    a.bad_target = &bad_row;
    a.counted = &counted;
    k->cross_entropy(a);
  }
  if (bad_row >= 0)
    ops::raise_failed_check(OpId::CrossEntropy, ops::CheckKind::TargetOutOfBounds,
                            ops::dense_operand<int64_t>(t)[bad_row], c, device, false);
  Tensor out;
  {
    NoGradGuard no_grad;
    switch (options.reduction()) {
      case Reduction::None: out = losses.reshape(class_target_shape(logits)); break;
      case Reduction::Sum: out = losses.sum(); break;
      default:  // the mean over the targets that count; NaN when none does (as PyTorch)
        out = counted > 0 ? div(losses.sum(), static_cast<double>(counted)) : full({}, NAN, TensorOptions().dtype(dtype).device(device));
    }
  }
  if (!autograd::needs_grad({&logits})) return out;
  const Shape logits_shape = logits.shape();
  const Reduction reduction = options.reduction();
  const int64_t ignore = options.ignore_index();
  autograd::record(out, "CrossEntropyLossBackward", [=](const Tensor& g) -> std::vector<Tensor> {
    // Each row's factor: the output gradient, over the count for a mean (0 when nothing counts:
    // every row is ignored then, and PyTorch's gradient is 0).
    Tensor scale;
    if (reduction == Reduction::None) scale = g.reshape({-1}).contiguous();
    else if (reduction == Reduction::Sum) scale = g.contiguous();
    else scale = counted > 0 ? div(g, static_cast<double>(counted)) : mul(g, 0.0);
    const Tensor grad = ops::empty_on(Shape{m, c}, dtype, device);
    if (m > 0 && c > 0) {
      ops::CrossEntropyGradArgs a;
      a.device = device.is_cpu() ? 0 : device.index();
      a.dtype = dtype;
      a.m = m, a.c = c;
      ops::wait_for_host(scale);
      a.logits = ops::dense_operand(x);
      a.target = ops::dense_operand<int64_t>(t);
      a.ignore = ignore;
      a.lse = ops::dense_operand(lse);
      a.scale = ops::dense_operand(scale);
      a.scale_stride = reduction == Reduction::None ? 1 : 0;
      a.grad_logits = ops::dense_result(grad);
      k->cross_entropy_grad(a);
    }
    return {from_class_rows(grad, logits_shape)};
  }, {&logits});
  return out;
}

}  // namespace locus::nn
