// Gradient clipping: norms in float32 on the gradients' devices, gathered on the first one; the
// norm of sharded gradients (fully_shard) is combined across the ranks.

#include "locus/nn/clip_grad.h"

#include <cmath>
#include <string>
#include <unordered_set>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "src/distributed/sharded_unit.h"

namespace locus::nn::utils {
namespace {

// The norm of one gradient, as a 1-element float32 tensor.
Tensor norm_of(const Tensor& g, double p) {
  const Tensor a = abs(g.to(DType::Float32)).reshape({-1});
  if (std::isinf(p)) return g.numel() ? max(a).reshape({1}) : zeros({1}, TensorOptions().device(g.device()));
  if (p == 2) return sqrt(sum(mul(a, a))).reshape({1});
  if (p == 1) return sum(a).reshape({1});
  return pow(sum(pow(a, p)), 1.0 / p).reshape({1});
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
  if (!(norm_type > 0))
    throw ValueError("[locus::clip_grad_norm_] norm_type must be positive (or INFINITY), got " + std::to_string(norm_type));
  if (!(max_norm >= 0)) throw ValueError("[locus::clip_grad_norm_] max_norm must not be negative, got " + std::to_string(max_norm));
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  std::vector<bool> is_shard;
  distributed::ProcessGroup* group = nullptr;  // of sharded parameters (fully_shard), if any
  std::unordered_set<const void*> seen;  // tied weights: one gradient, counted and clipped once
  for (const Tensor& p : parameters) {
    const auto [shard, unit] = distributed::detail::find_shard(p);
    if (unit) group = unit->group.get();
    if (p.grad().defined() && seen.insert(p.grad().impl()).second) {
      grads.push_back(p.grad());
      is_shard.push_back(unit != nullptr);
    }
  }
  if (grads.empty() && !group) return zeros({}, TensorOptions().dtype(DType::Float32));
  const Device device = grads.empty() ? Device(DeviceType::CPU) : grads[0].device();
  std::vector<Tensor> norms, shard_norms;
  for (size_t i = 0; i < grads.size(); ++i) (is_shard[i] ? shard_norms : norms).push_back(norm_of(grads[i], norm_type).to(device));
  if (group) {
    // Each rank holds some rows of each sharded gradient: the global norm adds the ranks' p-th
    // powers (takes their largest, for the infinity norm), as FSDP's clip_grad_norm_ does.
    const bool inf = std::isinf(norm_type);
    Tensor mine = shard_norms.empty() ? zeros({1}, TensorOptions().device(device)) : norm_of(cat(shard_norms), norm_type);
    Tensor combined = (inf ? mine : pow(mine, norm_type)).to(Device(DeviceType::CPU), false, /*copy=*/true);
    group->all_reduce(combined, inf ? distributed::ReduceOp::Max : distributed::ReduceOp::Sum)->wait();
    norms.push_back((inf ? combined : pow(combined, 1.0 / norm_type)).to(device));
  }
  // The norm of the per-gradient norms is the norm of all the gradients together.
  const Tensor total = norm_of(cat(norms), norm_type).reshape({});
  if (error_if_nonfinite) {
    const float t = total.item<float>();
    if (!std::isfinite(t))
      throw ValueError("[locus::clip_grad_norm_] the total norm of order " + std::to_string(norm_type) +
                       " of the gradients is " + std::to_string(t) +
                       ", so they cannot be clipped; pass error_if_nonfinite=false to clip anyway");
  }
  // max_norm / (total + 1e-6), at most 1: no branch on the host, so nothing waits for the device.
  const Tensor coef = clamp(div(full({}, max_norm, TensorOptions().dtype(DType::Float32).device(device)), add(total, 1e-6)),
                            std::nullopt, 1.0);
  for (const Tensor& g : grads) Tensor(g).mul_(coef.to(g.device(), g.dtype()));
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  if (!(clip_value >= 0))
    throw ValueError("[locus::clip_grad_value_] clip_value must not be negative, got " + std::to_string(clip_value));
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (p.grad().defined()) p.grad().copy_(clamp(p.grad(), -clip_value, clip_value));
}

}  // namespace locus::nn::utils
