// The layers.

#include "locus/nn/layers.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "locus/autograd.h"
#include "locus/nn/activation.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn_ops.h"
#include "locus/nn/functional.h"
#include "locus/ops.h"
#include "src/nn/linear_activation.h"
#include "src/nn/module_sequence.h"
#include "src/nn/python_repr.h"
#include "src/nn/train_mode_warning.h"

namespace locus::nn {

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, bool has_bias)
    : in_features_(in_features), out_features_(out_features), has_bias_(has_bias) {
  if (in_features <= 0 || out_features <= 0)
    throw ValueError("Linear: in_features and out_features must be positive, got " + std::to_string(in_features) +
                     " and " + std::to_string(out_features));
  reset();
  reset_parameters();
}

void LinearImpl::reset() {
  weight = register_parameter("weight", empty({out_features_, in_features_}));
  bias = has_bias_ ? register_parameter("bias", empty({out_features_})) : Tensor();
}

void LinearImpl::reset_parameters() {
  // PyTorch's default: kaiming_uniform(a=sqrt(5)) for W and the same bound for b, 1/sqrt(in).
  NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features_));
  weight.copy_(sub(mul(rand({out_features_, in_features_}), 2 * bound), bound));
  if (has_bias_) bias.copy_(sub(mul(rand({out_features_}), 2 * bound), bound));
}

Tensor LinearImpl::forward(const Tensor& x) { return locus::linear(x, weight, bias); }

std::string LinearImpl::extra_repr() const {
  return "in_features=" + std::to_string(weight.size(1)) + ", out_features=" + std::to_string(weight.size(0)) +
         ", bias=" + (bias.defined() ? "True" : "False");
}

Tensor GELUImpl::forward(const Tensor& x) { return gelu(x, options.approximate()); }

DropoutImpl::DropoutImpl(double p) : p_(p) {
  if (!(p >= 0 && p < 1)) throw ValueError("Dropout: p must be in [0, 1), got " + std::to_string(p));
}

std::string DropoutImpl::extra_repr() const { return "p=" + detail::python_float(p_) + ", inplace=False"; }

Tensor DropoutImpl::forward(const Tensor& x) {
  if (is_training()) detail::warn_if_training_without_grad("Dropout");
  return dropout(x, p_, is_training());
}

Tensor FlattenImpl::forward(const Tensor& x) { return x.flatten(start_, end_); }

std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(start_) + ", end_dim=" + std::to_string(end_);
}

UnflattenImpl::UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {
  if (sizes_.empty()) throw ValueError("Unflatten: unflattened_size must be non-empty");
  int64_t inferred = 0;
  for (int64_t s : sizes_) {
    if (s < -1) throw ValueError("Unflatten: invalid size " + std::to_string(s) + " in unflattened_size");
    inferred += s == -1;
  }
  if (inferred > 1) throw ValueError("Unflatten: only one dimension can be inferred");
}

Tensor UnflattenImpl::forward(const Tensor& x) {
  const int64_t rank = std::max<int64_t>(x.dim(), 1);
  if (dim_ < -rank || dim_ >= rank)
    throw IndexError("unflatten: Dimension out of range (expected to be in range of [" + std::to_string(-rank) + ", " +
                     std::to_string(rank - 1) + "], but got " + std::to_string(dim_) + ")");
  const int64_t dim = dim_ < 0 ? dim_ + x.dim() : dim_;
  const int64_t whole = x.dim() == 0 ? 1 : x.size(dim);
  int64_t known = 1;
  for (int64_t s : sizes_)
    if (s != -1) known *= s;
  std::vector<int64_t> sizes = sizes_;
  for (int64_t& s : sizes)
    if (s == -1) s = known == 0 ? -2 : whole / known;  // -2: no size fits, reported below
  int64_t product = 1;
  for (int64_t s : sizes) product *= s;
  if (product != whole || std::find(sizes.begin(), sizes.end(), -2) != sizes.end()) {
    std::string list;
    for (int64_t s : sizes_) list += (list.empty() ? "" : ", ") + std::to_string(s);
    throw ShapeError("unflatten: Provided sizes [" + list + "] don't multiply up to the size of dim " +
                     std::to_string(dim_) + " (" + std::to_string(whole) + ") in the input tensor");
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == dim) shape.insert(shape.end(), sizes.begin(), sizes.end());
    else shape.push_back(x.size(d));
  }
  if (x.dim() == 0) shape = sizes;
  return x.reshape(Shape(shape));
}

std::string UnflattenImpl::extra_repr() const {
  // Python prints the tuple: (2, 5), and a 1-tuple as (4,).
  std::string list;
  for (int64_t s : sizes_) list += (list.empty() ? "" : ", ") + std::to_string(s);
  if (sizes_.size() == 1) list += ",";
  return "dim=" + std::to_string(dim_) + ", unflattened_size=(" + list + ")";
}

SequentialImpl::SequentialImpl(std::initializer_list<AnyModule> modules)
    : SequentialImpl(std::vector<AnyModule>(modules)) {}

SequentialImpl::SequentialImpl(const std::vector<AnyModule>& modules) {
  for (const AnyModule& m : modules) push_back(m);
}

void SequentialImpl::push_back(const AnyModule& module) {
  detail::append_indexed(modules_, module, "Sequential",
                         [this](const std::string& name, const std::shared_ptr<Module>& m) { register_module(name, m); });
}

std::shared_ptr<Module> SequentialImpl::operator[](size_t i) const {
  if (i >= modules_.size())
    throw IndexError("Sequential: index " + std::to_string(i) + " is out of range for " + std::to_string(modules_.size()) +
                     " modules");
  return modules_[i];
}

std::shared_ptr<Module> SequentialImpl::clone(std::optional<Device> device) const {
  return detail::clone_indexed<SequentialImpl>(modules_, is_training(), device);
}

namespace {

// The activation module `m` is, when a Linear before it can fold it into its product.
std::optional<ops::Epilogue> foldable_activation(const Module& m) {
  if (typeid(m) == typeid(ReLUImpl)) return ops::Epilogue::Relu;
  // The fused epilogue is the exact GELU: the tanh approximation runs as its own op.
  if (typeid(m) == typeid(GELUImpl) && static_cast<const GELUImpl&>(m).options.approximate() == "none")
    return ops::Epilogue::Gelu;
  return std::nullopt;
}

// Note [Device errors in Sequential]
// A CPU batch fed to a model on sim:0 fails inside the first Linear as "... checking argument
// 'weight' of 'linear'": true of the op, but the user passed no weight and called no linear.
// Sequential knows more: which of its layers the input reached and where that layer's tensors
// live, so it rethrows the DeviceMismatchError (the same type, for code that catches it) as
// "Sequential layer 0 (Linear): input is on cpu but the layer's weight is on sim:0", with what
// to do: move the batch when the model lives on one device, the model when it is spread over
// several. A Sequential nested in another gets the full path ("1.0"); any other mismatch in a
// layer keeps its message behind the layer's name. Only the failing call pays: nothing is
// checked on the way.

// The devices of a module's parameters and buffers, in order of first appearance.
std::vector<Device> devices_of(const Module& m) {
  std::vector<Device> out;
  for (const auto& list : {m.named_parameters(), m.named_buffers()})
    for (const auto& t : list)
      if (t.second.defined() && std::find(out.begin(), out.end(), t.second.device()) == out.end())
        out.push_back(t.second.device());
  return out;
}

[[noreturn]] void rethrow_in_layer(const DeviceMismatchError& e, const Module& model, size_t index, const Module& layer,
                                   const Tensor& input) {
  const std::string here = std::to_string(index);
  if (!e.module().empty() && dynamic_cast<const SequentialImpl*>(&layer)) {
    const std::string inner = "Sequential layer " + e.module(), message = e.what();
    const std::string path = here + "." + e.module();
    throw DeviceMismatchError(e.first(), e.second(), e.argument(), e.op(), path,
                              "Sequential layer " + path + message.substr(message.rfind(inner, 0) == 0 ? inner.size() : 0));
  }
  const std::string where = "Sequential layer " + here + " (" + layer.name() + "): ";
  for (const auto& list : {layer.named_parameters(), layer.named_buffers()})
    for (const auto& [name, t] : list) {
      if (!t.defined() || t.device() == input.device()) continue;
      const std::vector<Device> devices = devices_of(model);
      std::string hint = "; move the batch with .to(device)";
      if (devices.size() > 1) {
        hint = "; the model's tensors are on";
        for (size_t k = 0; k < devices.size(); ++k)
          hint += (k == 0 ? " " : k + 1 == devices.size() ? " and " : ", ") + devices[k].str();
        hint += ": move the whole model with .to(device)";
      }
      throw DeviceMismatchError(t.device(), input.device(), "input", e.op(), here,
                                where + "input is on " + input.device().str() + " but the layer's " + name + " is on " +
                                    t.device().str() + hint);
    }
  throw DeviceMismatchError(e.first(), e.second(), e.argument(), e.op(), here, where + e.what());
}

}  // namespace

Tensor SequentialImpl::forward(const Tensor& x) {
  Tensor y = x;
  for (size_t i = 0; i < modules_.size(); ++i) {
    try {
      // A Linear followed by ReLU or GELU runs as one product with its bias and activation
      // (Note [Fused kernels]); exact types only, so a subclass's own forward still runs, and
      // only without forward hooks, which must see each layer's own call.
      if (i + 1 < modules_.size() && typeid(*modules_[i]) == typeid(LinearImpl) && !modules_[i]->has_forward_hooks() &&
          !modules_[i + 1]->has_forward_hooks()) {
        if (const auto epilogue = foldable_activation(*modules_[i + 1])) {
          const auto& lin = static_cast<const LinearImpl&>(*modules_[i]);
          y = linear_with_activation(y, lin.weight, lin.bias, *epilogue);
          ++i;
          continue;
        }
      }
      y = (*modules_[i])(y);
    } catch (const DeviceMismatchError& e) {
      rethrow_in_layer(e, *this, i, *modules_[i], y);  // Note [Device errors in Sequential]
    }
  }
  return y;
}

}  // namespace locus::nn
