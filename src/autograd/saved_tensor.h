#pragma once
// A tensor a backward function holds, with what the engine needs to know about it (Note
// [Saved tensors] in saved_tensor.cpp).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "locus/autograd/node.h"
#include "locus/tensor.h"

namespace locus::autograd {

class SavedTensor {
 public:
  /// `held`: the detached tensor the backward function captured; `from`: the tensor it was
  /// taken from. `is_output`: `from` is the output of the node that holds it, whose edge is the
  /// node itself (a shared pointer to it here would keep the node alive forever).
  /// `edge`: from's edge when the caller has it already (record() does), else it is looked up.
  SavedTensor(const Tensor& held, const Tensor& from, bool is_output, Edge edge = {});

  /// A ValueError with PyTorch's message when the data changed since it was saved (an in-place
  /// op wrote into it, or into another view of its buffer). `node` names the holder.
  void check_version(const Node& node) const;
  /// Gives the held tensor its history for a backward with create_graph: the edge of `from`
  /// (or `self`, the holder, for an output), so ops on it are recorded as ops on `from`.
  void attach(const std::shared_ptr<Node>& self) const;
  /// Cuts it from the history again.
  void detach() const;
  /// Replaces the held data by a copy when it shares `storage` (in-place recording).
  void unalias(const detail::Storage* storage);
  /// The held tensor (undefined for an undefined one: a missing bias).
  Tensor tensor() const { return held_ ? Tensor(held_) : Tensor(); }
  /// True when `from` required grad.
  bool requires_grad() const noexcept { return requires_grad_; }

 private:
  detail::intrusive_ptr<detail::TensorImpl> held_;
  uint32_t version_;
  bool is_output_;
  uint32_t output_nr_;  // which output of the holder, for an output
  bool private_;  // held is a detached handle of the node's own (not the source itself)
  bool requires_grad_;
  Edge edge_;  // the history of `from` (unused for an output)
};

/// RAII: the saved tensors attached to their history while a node's backward runs with
/// create_graph, cut again after (also when it throws).
class InputsAttached {
 public:
  InputsAttached(const std::vector<SavedTensor>& saved, const std::shared_ptr<Node>& self) : saved_(saved) {
    for (const SavedTensor& s : saved_) s.attach(self);
  }
  ~InputsAttached() {
    for (const SavedTensor& s : saved_) s.detach();
  }
  InputsAttached(const InputsAttached&) = delete;
  InputsAttached& operator=(const InputsAttached&) = delete;

 private:
  const std::vector<SavedTensor>& saved_;
};

}  // namespace locus::autograd
