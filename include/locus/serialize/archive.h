#pragma once
/// \file archive.h
/// LibTorch's checkpoint API: `torch::save(model, "model.pt")`, `torch::load(optimizer,
/// "optimizer.pt")`, and the archives underneath (`serialize::OutputArchive` /
/// `serialize::InputArchive`) for checkpoints of several things in one file. The file is
/// Locus's safetensors checkpoint (locus::save): every tensor under its dotted name, a CRC-32,
/// written atomically, readable by any safetensors reader. A module's names are its state_dict
/// names, so `torch::save(model, path)` and `locus::save(model->state_dict(), path)` write the
/// same file.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "locus/nn/module.h"
#include "locus/optim/optimizer.h"
#include "locus/ordered_dict.h"
#include "locus/serialize.h"
#include "locus/tensor.h"

namespace locus::serialize {

/// Tensors by key, and archives nested under keys, written to one file by save_to.
class OutputArchive {
 public:
  /// Stores `tensor` under `key` (a parameter and a buffer are stored alike, so is_buffer only
  /// keeps LibTorch's signature). ValueError for a key already written.
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  /// Stores every tensor of `nested` under "key.<its key>".
  void write(const std::string& key, const OutputArchive& nested);
  /// Writes the archive to `filename` (locus::save: atomic, checksummed safetensors).
  void save_to(const std::string& filename) const;
  /// The tensors written so far, by their full dotted keys.
  const OrderedDict<std::string, Tensor>& tensors() const noexcept { return tensors_; }

 private:
  OrderedDict<std::string, Tensor> tensors_;
};

/// A file written by OutputArchive (or any safetensors or PyTorch checkpoint locus::load reads),
/// read back by key.
class InputArchive {
 public:
  /// An empty archive; load_from fills it.
  InputArchive() = default;
  /// Reads `filename` (locus::load), its tensors placed on `device` (their saved device is not
  /// recorded: the CPU when not given). Errors as locus::load's.
  void load_from(const std::string& filename, std::optional<Device> device = std::nullopt);
  /// The tensor under `key` into `tensor`: when `tensor` is defined its values are copied into
  /// it in place (shape must match: ShapeError), keeping its device, dtype and requires_grad, as
  /// LibTorch's read; otherwise `tensor` becomes the stored tensor. ValueError naming the key
  /// and the keys there are when it is missing.
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  /// As read, but false instead of an error when `key` is missing.
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  /// The archive nested under `key` (the tensors whose keys start with "key."); false when there
  /// is none.
  bool try_read(const std::string& key, InputArchive& nested) const;
  /// As try_read, but ValueError when there is no such nested archive.
  void read(const std::string& key, InputArchive& nested) const;
  /// The keys at this level: tensors' keys and nested archives' names, in the file's order.
  std::vector<std::string> keys() const;
  /// Every tensor of this archive (nested ones with dotted keys), in the file's order.
  OrderedDict<std::string, Tensor> tensors() const;

 private:
  std::shared_ptr<const OrderedDict<std::string, Tensor>> file_;
  std::string prefix_;  // "" at the top, "key." inside a nested archive
};

/// A module's parameters and buffers under their state_dict names.
OutputArchive& operator<<(OutputArchive& archive, const std::shared_ptr<nn::Module>& module);
/// Loads a module saved by `<<` (Module::load_state_dict, strict: every key must match).
InputArchive& operator>>(InputArchive& archive, const std::shared_ptr<nn::Module>& module);
/// An optimizer's state_dict (its per-parameter state, step counts and group options).
OutputArchive& operator<<(OutputArchive& archive, const optim::Optimizer& optimizer);
/// Restores an optimizer saved by `<<` (Optimizer::load_state_dict).
InputArchive& operator>>(InputArchive& archive, optim::Optimizer& optimizer);
/// A tensor, under the key "0".
OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor);
/// The tensor under "0" (read: copied into `tensor` when it is defined).
InputArchive& operator>>(InputArchive& archive, Tensor& tensor);
/// Tensors under the keys "0", "1", ...
OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors);
/// Every tensor under "0", "1", ..., in order (the vector is replaced).
InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors);

/// A module handle (nn::Linear, a LOCUS_MODULE / TORCH_MODULE class) saves as its module.
template <class Handle>
  requires requires(const Handle& h) {
    typename Handle::ContainedType;
    { h.ptr() } -> std::convertible_to<std::shared_ptr<nn::Module>>;
  }
OutputArchive& operator<<(OutputArchive& archive, const Handle& module) {
  return archive << std::shared_ptr<nn::Module>(module.ptr());
}
/// A module handle loads into its module.
template <class Handle>
  requires requires(const Handle& h) {
    typename Handle::ContainedType;
    { h.ptr() } -> std::convertible_to<std::shared_ptr<nn::Module>>;
  }
InputArchive& operator>>(InputArchive& archive, const Handle& module) {
  return archive >> std::shared_ptr<nn::Module>(module.ptr());
}

}  // namespace locus::serialize

namespace locus {

/// What torch::save and torch::load take: anything an archive reads or writes.
template <class Value>
concept Archivable = requires(serialize::OutputArchive& out, serialize::InputArchive& in, const Value& v,
                              Value& target) {
  out << v;
  in >> target;
};

/// LibTorch's torch::save: `save(model, "model.pt")`, `save(optimizer, "opt.pt")`,
/// `save(tensor, path)`, `save(std::vector<Tensor>{...}, path)`. Atomic and checksummed
/// (locus::save); IOError naming the path on failure.
template <class Value>
  requires Archivable<Value>
void save(const Value& value, const std::string& path) {
  serialize::OutputArchive archive;
  archive << value;
  archive.save_to(path);
}

/// LibTorch's torch::load: restores what save wrote, into `value` (a module handle, an
/// optimizer, a tensor, a vector of tensors), tensors read onto `device` first (the CPU when not
/// given) and then copied where the value keeps them. A module must have exactly the saved
/// names (ValueError listing the missing and unexpected ones, nothing changed).
template <class Value>
  requires Archivable<std::remove_const_t<Value>>
void load(Value& value, const std::string& path, std::optional<Device> device = std::nullopt) {
  serialize::InputArchive archive;
  archive.load_from(path, device);
  archive >> value;
}

}  // namespace locus

LOCUS_API_END
