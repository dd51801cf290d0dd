// Note [Saved tensors]
// A backward function reads some of its op's inputs and outputs (mul reads both operands, relu
// its output). It holds them detached, and the node keeps, for each, a SavedTensor: the held
// tensor, the version of its buffer when it was saved, and the edge of the tensor it came from.
// Three things follow from that record.
//   1. Versions. Every write into a buffer goes through prepare_write, which adds one to the
//      buffer's counter. Before a node runs, each saved tensor's buffer must still be at the
//      version it was saved at; otherwise the values the formula would read are not the ones
//      the forward used, and backward stops with PyTorch's message ("one of the variables
//      needed for gradient computation has been modified by an inplace operation: ...").
//      PyTorch keeps one counter per family of views; a buffer is that family here, so a write
//      into any view of it counts (what PyTorch does for views too).
//   2. create_graph. A backward that is itself recorded must see the held tensors as the
//      tensors they came from: attach() gives the held (detached) tensor the edge of its source
//      for the time the node runs, so the ops of the formula record edges into the source's
//      history (into the holder itself, for its own output), and detach() cuts it again, so no
//      cycle outlives the call.
//   3. Freeing. After a backward without retain_graph, the node drops its function and these
//      records, which frees the saved buffers as the backward goes (PyTorch's behaviour: peak
//      memory falls as the backward proceeds); a second backward through it is an error.

#include "src/autograd/saved_tensor.h"

#include <sstream>

#include "locus/errors.h"
#include "src/autograd/node.h"

namespace locus::autograd {
namespace {

// PyTorch's legacy type name in its messages: torch.FloatTensor, torch.cuda.DoubleTensor.
std::string legacy_type_name(const Tensor& t) {
  const char* kind = "Float";
  switch (t.dtype()) {
    case DType::Float64: kind = "Double"; break;
    case DType::Float16: kind = "Half"; break;
    case DType::BFloat16: kind = "BFloat16"; break;
    case DType::Int64: kind = "Long"; break;
    case DType::Int32: kind = "Int"; break;
    case DType::Int16: kind = "Short"; break;
    case DType::Int8: kind = "Char"; break;
    case DType::UInt8: kind = "Byte"; break;
    case DType::Bool: kind = "Bool"; break;
    default: break;
  }
  return std::string(t.device().is_cuda() ? "torch.cuda." : "torch.") + kind + "Tensor";
}

}  // namespace

SavedTensor::SavedTensor(const Tensor& held, const Tensor& from, bool is_output, Edge edge)
    : held_(held.defined() ? held.impl() : nullptr),
      version_(held.defined() ? held.impl()->storage()->version() : 0),
      is_output_(is_output),
      output_nr_(is_output ? from.impl()->output_nr() : 0),
      // A backward may hold the source itself (a fused op that read its input as it was): it
      // has its history already, and attach() or unalias() must never touch a user's tensor.
      private_(held.defined() && !held.requires_grad() && !held.impl()->grad_fn()),
      // An output is saved before its node is linked to it, so it does not require grad yet.
      requires_grad_(held.defined() && (is_output || from.requires_grad())),
      edge_(std::move(edge)) {
  if (!is_output && requires_grad_ && !edge_.is_valid()) edge_ = gradient_edge(from);
}

void SavedTensor::check_version(const Node& node) const {
  if (!held_) return;
  const uint32_t now = held_->storage()->version();
  if (now == version_) return;
  const Tensor t(held_);
  std::ostringstream os;
  os << "[locus::backward] one of the variables needed for gradient computation has been modified by an inplace "
        "operation: ["
     << legacy_type_name(t) << " " << t.shape() << "]";
  if (is_output_) os << ", which is output " << output_nr_ << " of " << node.name() << ",";
  else if (edge_.function && !dynamic_cast<const AccumulateGrad*>(edge_.function.get()))
    os << ", which is output " << edge_.input_nr << " of " << edge_.function->name() << ",";
  os << " is at version " << now << "; expected version " << version_
     << " instead. (It is read by " << node.name()
     << "; modify a clone() instead, or do the in-place op before the op that reads the tensor.)";
  throw ValueError(os.str());
}

void SavedTensor::attach(const std::shared_ptr<Node>& self) const {
  if (!requires_grad_ || !private_) return;
  if (is_output_) held_->set_grad_fn(self, output_nr_);
  else held_->set_grad_fn(edge_.function, edge_.input_nr);
  held_->set_requires_grad(true);
}

void SavedTensor::detach() const {
  if (!requires_grad_ || !private_) return;
  held_->set_grad_fn(nullptr);
  held_->set_requires_grad(false);
}

void SavedTensor::unalias(const detail::Storage* storage) {
  if (!held_ || held_->storage().get() != storage || !private_) return;
  const Tensor copy = Tensor(held_).clone();
  held_->set_data_from(*copy.impl());
  version_ = held_->storage()->version();
}

}  // namespace locus::autograd
