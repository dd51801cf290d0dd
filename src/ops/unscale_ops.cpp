// GradScaler's unscale: gradients grouped by dtype, each group one call of the device's kernel.

#include "src/core/device_ordinal.h"
#include "src/ops/unscale.h"

#include <map>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "src/ops/dispatch.h"
#include "src/ops/kernel_operand.h"

namespace locus::ops {
namespace {

// Where the device lacks the kernel and the fallback policy lets the op run anyway: the same
// result from ops every device has (two passes per tensor instead of one).
void unscale_with_ops(const std::vector<Tensor>& grads, double inv_scale, const Tensor& found_inf) {
  for (const Tensor& g : grads) {
    if (g.numel() == 0) continue;
    const Tensor bad = ne(sub(g, g), 0).to(DType::Float32).max().reshape({1});  // inf - inf and NaN - NaN are NaN
    Tensor(found_inf).copy_(maximum(found_inf, bad));
    Tensor(g).mul_(inv_scale);
  }
}

}  // namespace

void unscale_grads_(const std::vector<Tensor>& grads, double inv_scale, const Tensor& found_inf) {
  NoGradGuard no_grad;
  const Device device = found_inf.device();
  std::map<DType, std::vector<Tensor>> by_dtype;
  for (const Tensor& g : grads) {
    if (g.device() != device) throw DeviceMismatchError(device, g.device(), "grads", "unscale_");
    if (!is_floating_point(g.dtype()))
      throw DTypeError(op_prefix(OpId::UnscaleGrads) + "gradients must be floating, got " + std::string(dtype_name(g.dtype())));
    by_dtype[g.dtype()].push_back(g);
  }
  const float inv = static_cast<float>(inv_scale);
  for (auto& [dtype, group] : by_dtype) {
    const KernelTable* kernels = kernels_for(OpId::UnscaleGrads, device, dtype);
    if (!kernels) {
      unscale_with_ops(group, inv, found_inf);
      continue;
    }
    // The kernel walks contiguous buffers; a strided gradient (rare) goes through a copy.
    std::vector<Tensor> buffers;
    std::vector<char*> data;
    std::vector<int64_t> numel;
    for (const Tensor& g : group) {
      buffers.push_back(g.is_contiguous() ? g : g.contiguous());
      wait_for_host(buffers.back());
      data.push_back(ops::dense_result(buffers.back()));
      numel.push_back(g.numel());
    }
    wait_for_host(found_inf);
    UnscaleArgs a;
    a.device = detail::ordinal(device);
    a.dtype = dtype;
    a.count = static_cast<int>(data.size());
    a.data = data.data();
    a.numel = numel.data();
    a.inv_scale = inv;
    a.found_inf = ops::dense_result<float>(found_inf);
    kernels->unscale(a);
    for (size_t k = 0; k < group.size(); ++k)
      if (ops::operand_address(buffers[k]) != ops::operand_address(group[k])) Tensor(group[k]).copy_(buffers[k]);
  }
}

}  // namespace locus::ops
