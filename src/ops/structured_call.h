#pragma once
// The path of the structured ops: reductions, scans, sort/top-k, softmax, products (matmul,
// addmm, bmm, baddbmm), indexing, scatters, fill and the random fills. See Note [Structured op path].
//
// Note [Structured op path]
// Elementwise ops run through call() (Note [Op path]). The structured ops differ in their
// shapes and kernel arguments, not in the path, so each front end walks the same steps through
// one StructuredCall, in this order:
//   0. autocast, when a guard is on: ops::autocast(op, ...) with the op table's policy;
//   1. the device rule over the named operands (StructuredCall's constructor);
//   2. the op's dtype and shape rules (its own code, or the op table's rule for reductions);
//   3. kernels(dtype): the device's kernels, or null, and then fall_back(...) runs the very same
//      front end on CPU copies and brings the result back (also into out=);
//   4. output(shape, dtype): out= checked (device, shape, castable dtype, grad mode) or a new
//      tensor allocated for the thread's current stream;
//   5. wait_for_inputs(), then the kernel with the op's argument struct;
//   6. finish(result): an out= form gets the result (converted if its dtype differs); else, when
//      needs_grad(), the op records its backward.
// Reductions go one step further: their rules, functors and derivatives are columns of the op
// table (LOCUS_REDUCE_OPS), so a new reduction is a table line, a functor, a declaration and a
// test (src/ops/reduce_ops.cpp). docs/design.md ("Adding an op") shows each kind.
// Two ops keep their own path, on purpose: copy_ (the fallback's way back is itself a copy,
// src/ops/copy_ops.cpp) and the GradScaler's unscale (one launch over a list of tensors that
// may live on several devices, src/ops/unscale_ops.cpp).
//
// Note [One recipe]
// The fused ops (convolution, linear with its epilogue, batch norm in training, layer and RMS
// norm, attention, cross_entropy, the optimizers' update) walk the same StructuredCall: step 3
// is fused(&KernelTable::entry, dtype, also), which finds the device's optional one-pass kernel
// or says to compose the op from general ops (Note [Fused kernels]), and step 6 records one
// node that binds its kernel's operands from the tensors it saved (Note [Kernel operands]).
// Their front ends live here, in src/ops/<op>_ops.cpp, declared in src/ops/<op>.h; nn/, optim/
// and amp/ check their arguments with PyTorch's messages and call those front ends, and
// cmake/CheckLayers.cmake fails an include of the path's internals above ops (the kernel table
// and registry, fused.h, kernel_operand.h, this file, elementwise_call.h, strided_iter.h,
// dispatch.h). docs/design.md walks one op of each kind down the path.

#include <initializer_list>

#include "locus/autograd.h"
#include "locus/tensor.h"
#include "src/core/device_ordinal.h"
#include "src/ops/dispatch.h"
#include "src/ops/fused.h"

namespace locus::ops {

/// One call of a structured op on its way down the path (Note [Structured op path]).
class StructuredCall {
 public:
  static constexpr int kMaxInputs = 4;
  /// Step 1: the device all `inputs` share (DeviceMismatchError naming the argument otherwise).
  /// `out` is the tensor of an out= form (undefined otherwise); its device is checked in output().
  /// Inline, as the other steps' common case: a reduction of one element costs ~2,500
  /// instructions, and the path's share of them is kept small (docs/performance.md).
  /// Undefined inputs (a missing bias or weight) take no part.
  StructuredCall(OpId op, std::initializer_list<Operand> inputs, Tensor out = Tensor())
      : op_(op),
        device_(inputs.size() == 1 ? inputs.begin()->tensor.device()
                                   : common_device(op, inputs.begin(), static_cast<int>(inputs.size()))),
        out_(std::move(out)) {
    for (const Operand& o : inputs)
      if (ninputs_ < kMaxInputs) inputs_[ninputs_++] = &o.tensor;
  }

  OpId op() const noexcept { return op_; }
  Device device() const noexcept { return device_; }
  /// The argument struct's device index (0 for cpu).
  int device_index() const noexcept { return detail::ordinal(device_); }
  bool has_out() const noexcept { return out_.defined(); }

  /// Step 3: the kernels of the device for `dtype`, or null when the fallback must run the op
  /// (or NotImplementedError, as the fallback policy says).
  const KernelTable* kernels(DType dtype) const { return kernels_for(op_, device_, dtype); }

  /// Step 3 for a fused op (Note [Fused kernels]): the device's kernel table when it has the
  /// optional entry `entry` and supports this call's op, and each op in `also` that the kernel
  /// stands for too, in `dtype`; null when the front end composes the op from general kernels
  /// instead (never the CPU fallback).
  template <class Entry>
  const KernelTable* fused(Entry KernelTable::*entry, DType dtype, std::initializer_list<OpId> also = {}) const noexcept {
    const KernelTable* k = fused_kernels(entry, device_, dtype, {op_});
    return k && (also.size() == 0 || fused_kernels(entry, device_, dtype, also)) ? k : nullptr;
  }

  /// Step 3's other branch: `same_op` (the front end itself) on CPU copies of `operands`, the
  /// result brought back to the device, or copied into out= when there is one.
  template <class SameOp, class... Operands>
  auto fall_back(SameOp&& same_op, const Operands&... operands) const {
    auto result = run_on_cpu(device_, std::forward<SameOp>(same_op), operands...);
    if constexpr (std::is_same_v<decltype(result), Tensor>) return finish(std::move(result));
    else return result;
  }

  /// Step 4: where the kernel writes a result of `shape` and `dtype`: out= itself when its
  /// dtype is `dtype` (after checking its device, shape, dtype and grad mode), else a new tensor.
  Tensor output(const Shape& shape, DType dtype) const {
    return out_.defined() ? checked_out(shape, dtype) : empty_on(shape, dtype, device_);
  }

  /// Step 5: waits for pending device work on the inputs before a host-side kernel reads them.
  void wait_for_inputs() const {
    for (int i = 0; i < ninputs_; ++i)
      if (inputs_[i]->defined()) wait_for_host(*inputs_[i]);
  }

  /// Step 6: true when the result must be recorded (grad mode on, an input requires grad, and
  /// not an out= form, which output() refused for inputs that require grad).
  bool needs_grad() const {
    if (out_.defined() || !is_grad_enabled()) return false;
    for (int i = 0; i < ninputs_; ++i)
      if (inputs_[i]->defined() && inputs_[i]->requires_grad()) return true;
    return false;
  }

  /// Step 6: the value the public function returns: out= (holding `result`) for an out= form,
  /// else `result`.
  Tensor finish(Tensor result) const { return out_.defined() ? into_out(result) : result; }

 private:
  Tensor checked_out(const Shape& shape, DType dtype) const;
  Tensor into_out(const Tensor& result) const;

  OpId op_;
  Device device_;
  const Tensor* inputs_[kMaxInputs] = {};  // the first ninputs_ are set
  int ninputs_ = 0;
  Tensor out_;
};

}  // namespace locus::ops
