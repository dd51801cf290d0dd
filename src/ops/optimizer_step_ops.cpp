// Gathering an optimizer step's parameters for the fused kernel of their device.

#include "src/core/device_ordinal.h"
#include "src/ops/optimizer_step.h"

#include "src/ops/dispatch.h"
#include "src/ops/fused.h"
#include "src/ops/kernel_operand.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {
namespace {

bool usable(const Tensor& t, Device device, DType dtype) {
  return !t.defined() || (t.device() == device && t.dtype() == dtype && t.is_contiguous());
}

char* buffer(const Tensor& t) { return dense_result(t); }

}  // namespace

bool FusedUpdate::add(size_t index, const Tensor& param, const Tensor& grad, const Tensor& state1, const Tensor& state2,
                      bool fresh) {
  const Device device = param.device();
  const DType dtype = param.dtype();
  const KernelTable* kernels =
      fused_kernels(&KernelTable::optimizer_step, device, dtype, {OpId::OptimizerStep});
  if (!kernels) return false;
  for (const Tensor* t : {&param, &grad, &state1, &state2})
    if (!usable(*t, device, dtype)) return false;
  if (!(grad.shape() == param.shape())) return false;  // the composed ops raise the error
  // A parameter listed twice (PyTorch warns) must be updated twice, one after the other, not by
  // two threads of one pass: the second listing goes the composed way.
  if (!seen_.insert(operand_address(param)).second) return false;
  Group& g = groups_[{static_cast<int>(device.type()) * 65536 + device.index(), dtype}];
  g.kernels = kernels;
  g.indices.push_back(index);
  for (const Tensor* t : {&param, &grad, &state1, &state2})
    if (t->defined()) g.keep.push_back(*t);
  g.params.push_back(buffer(param));
  g.grads.push_back(buffer(grad));
  g.state1.push_back(buffer(state1));
  g.state2.push_back(buffer(state2));
  g.fresh.push_back(fresh ? 1 : 0);
  g.numel.push_back(param.numel());
  return true;
}

std::vector<size_t> FusedUpdate::run() {
  std::vector<size_t> done;
  for (auto& [key, g] : groups_) {
    const Tensor& first = g.keep.front();
    for (const Tensor& t : g.keep) wait_for_host(t);
    OptimizerStepArgs a;
    static_cast<OptimizerHyperparameters&>(a) = hyper_;
    a.device = detail::ordinal(first.device());
    a.dtype = key.second;
    a.count = static_cast<int>(g.indices.size());
    a.params = g.params.data();
    a.grads = g.grads.data();
    a.state1 = g.state1.front() ? g.state1.data() : nullptr;
    a.state2 = g.state2.front() ? g.state2.data() : nullptr;
    a.fresh = g.fresh.data();
    a.numel = g.numel.data();
    g.kernels->optimizer_step(a);
    done.insert(done.end(), g.indices.begin(), g.indices.end());
  }
  return done;
}

}  // namespace locus::ops
