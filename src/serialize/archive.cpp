// LibTorch's archives over Locus's one checkpoint format (Note [Archives are flat]).

#include "locus/serialize/archive.h"

#include <algorithm>
#include <sstream>

#include "locus/autograd.h"
#include "locus/errors.h"

namespace locus::serialize {

// Note [Archives are flat]
// LibTorch's archives nest (a module's archive holds one archive per submodule) and its files
// are TorchScript's zip. Locus keeps one checkpoint format, safetensors with a checksum, which
// has no nesting: a nested archive is the set of keys under "name.", so a module written through
// an archive has exactly its state_dict names ("conv1.weight", "bn.running_mean") and the file
// is the one locus::save(model->state_dict(), path) writes. InputArchive views one loaded
// dictionary through a prefix; nested archives share it.

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool /*is_buffer*/) {
  if (!tensor.defined()) throw ValueError("OutputArchive::write: the tensor under '" + key + "' is undefined");
  tensors_.insert(key, tensor.detach());
}

void OutputArchive::write(const std::string& key, const OutputArchive& nested) {
  for (const auto& [name, tensor] : nested.tensors_) tensors_.insert(key + "." + name, tensor);
}

void OutputArchive::save_to(const std::string& filename) const { locus::save(tensors_, filename); }

void InputArchive::load_from(const std::string& filename, std::optional<Device> device) {
  file_ = std::make_shared<const OrderedDict<std::string, Tensor>>(locus::load(filename, device));
  prefix_.clear();
}

namespace {

[[noreturn]] void missing_key(const std::string& key, const std::vector<std::string>& keys) {
  std::ostringstream os;
  os << "InputArchive: no tensor under '" << key << "'; the archive has";
  if (keys.empty()) os << " none";
  for (size_t i = 0; i < keys.size(); ++i) os << (i ? ", '" : " '") << keys[i] << "'";
  throw ValueError(os.str());
}

}  // namespace

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool /*is_buffer*/) {
  if (!file_) return false;
  const auto found = file_->find(prefix_ + key);
  if (found == file_->end()) return false;
  const Tensor& stored = found->second;
  if (!tensor.defined()) {
    tensor = stored;
    return true;
  }
  if (!(tensor.shape() == stored.shape())) {
    std::ostringstream os;
    os << "InputArchive: the tensor under '" << prefix_ + key << "' has shape " << stored.shape()
       << ", the tensor it is read into " << tensor.shape();
    throw ShapeError(os.str());
  }
  NoGradGuard no_grad;  // a parameter is overwritten in place, as LibTorch's read does
  tensor.copy_(stored);
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  if (!try_read(key, tensor, is_buffer)) missing_key(prefix_ + key, keys());
}

bool InputArchive::try_read(const std::string& key, InputArchive& nested) const {
  if (!file_) return false;
  const std::string inner = prefix_ + key + ".";
  const bool any = std::any_of(file_->begin(), file_->end(),
                               [&](const auto& item) { return item.first.starts_with(inner); });
  if (!any) return false;
  nested.file_ = file_;
  nested.prefix_ = inner;
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& nested) const {
  if (!try_read(key, nested)) missing_key(prefix_ + key, keys());
}

std::vector<std::string> InputArchive::keys() const {
  std::vector<std::string> out;
  if (!file_) return out;
  for (const auto& item : *file_) {
    if (!item.first.starts_with(prefix_)) continue;
    const std::string rest = item.first.substr(prefix_.size());
    const std::string head = rest.substr(0, rest.find('.'));
    if (std::find(out.begin(), out.end(), head) == out.end()) out.push_back(head);
  }
  return out;
}

OrderedDict<std::string, Tensor> InputArchive::tensors() const {
  OrderedDict<std::string, Tensor> out;
  if (!file_) return out;
  for (const auto& item : *file_)
    if (item.first.starts_with(prefix_)) out.insert(item.first.substr(prefix_.size()), item.second);
  return out;
}

OutputArchive& operator<<(OutputArchive& archive, const std::shared_ptr<nn::Module>& module) {
  if (!module) throw ValueError("torch::save: the module handle is empty");
  for (const auto& [name, tensor] : module->state_dict()) archive.write(name, tensor);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, const std::shared_ptr<nn::Module>& module) {
  if (!module) throw ValueError("torch::load: the module handle is empty");
  module->load_state_dict(archive.tensors());
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const optim::Optimizer& optimizer) {
  for (const auto& [name, tensor] : optimizer.state_dict()) archive.write(name, tensor);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, optim::Optimizer& optimizer) {
  optimizer.load_state_dict(archive.tensors());
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor) {
  archive.write("0", tensor);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, Tensor& tensor) {
  archive.read("0", tensor);
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) archive.write(std::to_string(i), tensors[i]);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors) {
  std::vector<Tensor> out;
  for (size_t i = 0;; ++i) {
    Tensor t;
    if (!archive.try_read(std::to_string(i), t)) break;
    out.push_back(t);
  }
  tensors = std::move(out);
  return archive;
}

}  // namespace locus::serialize
