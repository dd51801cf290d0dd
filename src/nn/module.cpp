// nn::Module: registration, traversal, moving in place, state dicts.

#include "locus/nn/module.h"

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <unordered_set>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/nn/forward_hooks.h"
#include "locus/ops.h"

namespace locus::nn {

std::string module_type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : type.name();
  // Keep the class's own name: "locus::nn::LinearImpl" and "(anonymous namespace)::NetImpl"
  // print as "Linear" and "Net", as PyTorch prints type(module).__name__.
  if (const size_t lt = name.find('<'); lt != std::string::npos) name.erase(lt);
  if (const size_t colon = name.rfind("::"); colon != std::string::npos) name.erase(0, colon + 2);
  if (name.size() > 4 && name.ends_with("Impl")) name.erase(name.size() - 4);
  return name;
}

// Note [Forward of any signature]
// LibTorch's modules declare forward as they like: `Tensor forward(Tensor x)` by value, as
// pytorch/examples write it, or several inputs. Such a forward hides Module::forward (it does not
// override it), so a caller holding the module's static type (its handle, `model.forward(x)`)
// reaches it directly, but Sequential, ModuleList's users and DataParallel replicas call through
// Module's virtual forward. The places that learn a module's class (its handle, register_module,
// AnyModule: remember_module_class) record a call of the class's own forward with one tensor,
// checked at compile time to exist and return a Tensor; this virtual falls back to it, so any
// module LibTorch's Sequential takes with a tensor input runs here too.
Tensor Module::forward(const Tensor& input) {
  if (const locus::detail::ModuleForward own = locus::detail::find_module_class(typeid(*this)).forward)
    return own(*this, input);
  throw NotImplementedError("Module [" + name() + "] is missing the required \"forward\" function (or takes other arguments than one tensor)");
}

Tensor Module::operator()(const Tensor& x) {
  if (!has_forward_hooks()) [[likely]]
    return forward(x);
  return detail::forward_with_hooks(*this, x);
}

namespace {
// Ids from one counter for both kinds of hook, so remove_forward_hook needs no kind.
std::atomic<int64_t> g_next_forward_hook_id{0};
}  // namespace

int64_t Module::register_forward_pre_hook(ForwardPreHook hook) {
  const int64_t id = g_next_forward_hook_id++;
  forward_pre_hooks_.emplace_back(id, std::move(hook));
  return id;
}

int64_t Module::register_forward_hook(ForwardHook hook) {
  const int64_t id = g_next_forward_hook_id++;
  forward_hooks_.emplace_back(id, std::move(hook));
  return id;
}

void Module::remove_forward_hook(int64_t id) {
  std::erase_if(forward_pre_hooks_, [id](const auto& h) { return h.first == id; });
  std::erase_if(forward_hooks_, [id](const auto& h) { return h.first == id; });
}

void Module::run_forward_pre_hooks(std::vector<Tensor>& inputs) {
  // A copy: a hook may add or remove hooks.
  const auto hooks = forward_pre_hooks_;
  for (const auto& [id, hook] : hooks) hook(*this, inputs);
}

void Module::run_forward_hooks(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  const auto hooks = forward_hooks_;
  for (const auto& [id, hook] : hooks) hook(*this, inputs, outputs);
}

void Module::replace_registered_parameter(const std::string& name, Tensor value) {
  for (auto& [n, t] : parameters_)
    if (n == name) {
      t = std::move(value);
      return;
    }
  throw ValueError(this->name() + " has no parameter named '" + name + "'");
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  if (!module) throw ValueError("register_module: '" + name + "' is an empty module");
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError("register_module: a submodule name must be non-empty and without '.', got '" + name + "'");
  for (const auto& [existing, child] : children_)
    if (existing == name) throw ValueError("register_module: '" + name + "' is already registered");
  children_.emplace_back(name, std::move(module));
}

namespace {

// Indents every line but the first (PyTorch's _addindent), so nested modules line up.
std::string indent_following_lines(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

std::string Module::repr() const {
  std::vector<std::string> lines;
  const std::string extra = extra_repr();
  size_t extra_lines = 0;
  if (!extra.empty()) {
    std::istringstream in(extra);
    for (std::string line; std::getline(in, line);) lines.push_back(line), ++extra_lines;
  }
  for (const auto& [child_name, child] : children_)
    lines.push_back("(" + child_name + "): " + indent_following_lines(child->repr()));
  std::string out = name() + "(";
  if (extra_lines == 1 && children_.empty()) out += lines[0];
  else if (!lines.empty()) {
    out += "\n";
    for (const std::string& line : lines) out += "  " + line + "\n";
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Module& module) { return os << module.repr(); }

void Module::clear_registrations() noexcept {
  parameters_.clear();
  buffers_.clear();
  non_persistent_buffers_.clear();
  children_.clear();
}

void Module::copy_state_from(const Module& source, std::optional<Device> device) {
  NoGradGuard no_grad;
  for (const bool params : {true, false}) {
    const OrderedDict<std::string, Tensor> from = params ? source.named_parameters() : source.named_buffers();
    const OrderedDict<std::string, Tensor> to = params ? named_parameters() : named_buffers();
    bool same = from.size() == to.size();
    for (size_t i = 0; same && i < from.size(); ++i) same = from[i].first == to[i].first;
    if (!same)
      throw ValueError("clone: " + name() + "'s reset() registers other " + (params ? "parameters" : "buffers") +
                       " than the module has; reset() must build the same structure every time");
    for (size_t i = 0; i < from.size(); ++i) {
      Tensor dst = to[i].second;
      dst.set_data(from[i].second.detach().to(device.value_or(from[i].second.device()), false, /*copy=*/true));
    }
  }
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  if (value.is_floating_point() && !value.requires_grad()) value.requires_grad_(true);
  parameters_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value, bool persistent) {
  buffers_.emplace_back(name, value);
  if (!persistent) non_persistent_buffers_.push_back(name);
  return value;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [name, child] : children_)
    if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
  return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  for (const auto& [name, child] : children_) out.insert(name, child);
  return out;
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  for (const std::shared_ptr<Module>& child : children()) child->apply(fn);
  fn(*this);
  return *this;
}

void Module::collect(const std::string& prefix, bool params, bool recurse, OrderedDict<std::string, Tensor>& out) const {
  for (const auto& [name, t] : params ? parameters_ : buffers_) out.insert(prefix + name, t);
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", params, true, out);
}

namespace {

// A tensor registered under several names (tied weights: a language model's embedding and output
// layer) is listed once, under its first name, as PyTorch's named_parameters() does, so an
// optimizer steps it once; state_dict() keeps every name.
OrderedDict<std::string, Tensor> first_names_only(const OrderedDict<std::string, Tensor>& all) {
  std::unordered_set<const void*> seen;
  OrderedDict<std::string, Tensor> out;
  for (const auto& [name, t] : all)
    if (!t.defined() || seen.insert(t.impl()).second) out.insert(name, t);
  return out;
}

}  // namespace

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  collect("", true, recurse, out);
  return first_names_only(out);
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  collect("", false, recurse, out);
  return first_names_only(out);
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

void Module::move(std::optional<Device> device, std::optional<DType> dtype, bool non_blocking) {
  NoGradGuard no_grad;
  auto moved = [&](const Tensor& t) {
    const DType to_dtype = dtype && t.is_floating_point() ? *dtype : t.dtype();
    return t.to(device.value_or(t.device()), to_dtype, non_blocking);
  };
  for (auto& [name, t] : named_parameters()) {
    t.set_data(moved(t));
    if (const Tensor g = t.grad(); g.defined()) t.set_grad(moved(g));
  }
  for (auto& [name, t] : named_buffers()) t.set_data(moved(t));
}

Module& Module::to(Device device, bool non_blocking) {
  move(device, std::nullopt, non_blocking);
  return *this;
}
Module& Module::to(DType dtype, bool non_blocking) {
  move(std::nullopt, dtype, non_blocking);
  return *this;
}
Module& Module::to(Device device, DType dtype, bool non_blocking) {
  move(device, dtype, non_blocking);
  return *this;
}

Device Module::device() const {
  std::optional<NamedTensor> first;
  for (const auto& list : {named_parameters(), named_buffers()})
    for (const auto& nt : list) {
      if (!first) first = nt.pair();
      else if (nt.second.device() != first->second.device())
        throw ValueError("Module::device: the module's tensors are on several devices: '" + first->first + "' on " +
                         first->second.device().str() + " and '" + nt.first + "' on " + nt.second.device().str() +
                         "; call .to(device) on the whole module");
    }
  return first ? first->second.device() : Device(DeviceType::CPU);
}

Module& Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) p.set_grad(Tensor());
    else p.grad().zero_();
  }
}

void Module::collect_state(const std::string& prefix, OrderedDict<std::string, Tensor>& out) const {
  for (const auto& [name, t] : parameters_) out.insert(prefix + name, t.detach());
  for (const auto& [name, t] : buffers_)
    if (std::find(non_persistent_buffers_.begin(), non_persistent_buffers_.end(), name) == non_persistent_buffers_.end())
      out.insert(prefix + name, t.detach());
  for (const auto& [name, child] : children_) child->collect_state(prefix + name + ".", out);
}

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  collect_state("", out);
  return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& name_prefix,
                                                                        bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  if (include_self) {
    std::shared_ptr<Module> self = std::const_pointer_cast<Module>(weak_from_this().lock());
    if (!self)
      throw ValueError("named_modules: this " + name() +
                       " is not held by a std::shared_ptr (create it with std::make_shared or use its module handle), so "
                       "it cannot list itself; call named_modules(prefix, /*include_self=*/false) for its submodules");
    out.insert(name_prefix, std::move(self));
  }
  // PyTorch's walk: depth first, a module before its children, each module once (a module
  // registered under two names keeps the first).
  std::vector<const Module*> seen{this};
  auto walk = [&](auto&& self_walk, const Module& m, const std::string& prefix) -> void {
    for (const auto& [child_name, child] : m.children_) {
      if (std::find(seen.begin(), seen.end(), child.get()) != seen.end()) continue;
      seen.push_back(child.get());
      const std::string full = prefix.empty() ? child_name : prefix + "." + child_name;
      out.insert(full, child);
      self_walk(self_walk, *child, full);
    }
  };
  walk(walk, *this, name_prefix);
  return out;
}

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

}  // namespace

IncompatibleKeys Module::load_state_dict(const OrderedDict<std::string, Tensor>& state, bool strict) {
  NoGradGuard no_grad;
  const OrderedDict<std::string, Tensor> mine = state_dict();
  IncompatibleKeys keys;
  for (const auto& [key, t] : mine)
    if (!state.contains(key)) keys.missing_keys.push_back(key);
  for (const auto& [key, t] : state)
    if (!mine.contains(key)) keys.unexpected_keys.push_back(key);
  // Every problem is found before anything is copied, so a bad dict leaves the module unchanged
  // and its error lists them all (PyTorch's message, one line per kind).
  std::vector<std::string> mismatches, undefined;
  std::vector<std::pair<Tensor, Tensor>> copies;  // (the module's tensor, the value to copy in)
  for (const auto& [key, t] : state) {
    const auto it = mine.find(key);
    if (it == mine.end()) continue;
    if (!t.defined()) {
      undefined.push_back(key);
    } else if (!(it->second.shape() == t.shape())) {
      std::ostringstream os;
      os << "size mismatch for " << key << ": copying a param with shape " << t.shape()
         << " from checkpoint, the shape in current model is " << it->second.shape() << ".";
      mismatches.push_back(os.str());
    } else {
      copies.emplace_back(it->second, t);
    }
  }
  std::string errors;
  if (strict && !keys.missing_keys.empty()) errors += "\n\tMissing key(s) in state_dict: " + quoted_list(keys.missing_keys) + ". ";
  if (strict && !keys.unexpected_keys.empty())
    errors += "\n\tUnexpected key(s) in state_dict: " + quoted_list(keys.unexpected_keys) + ". ";
  if (!undefined.empty()) errors += "\n\tUndefined tensor(s) in state_dict: " + quoted_list(undefined) + ". ";
  for (const std::string& m : mismatches) errors += "\n\t" + m;
  if (!errors.empty()) {
    const std::string message = "Error(s) in loading state_dict for " + name() + ":" + errors;
    const bool key_errors = strict && (!keys.missing_keys.empty() || !keys.unexpected_keys.empty());
    if (!key_errors && undefined.empty()) throw ShapeError(message);  // shapes are all that is wrong
    throw ValueError(message);
  }
  // Conversions that allocate (dtype, layout) are done first too, so a failing allocation also
  // leaves the module as it was; what remains copies bytes into memory that already exists.
  for (auto& [dst, src] : copies)
    if (src.device() != dst.device() && (src.dtype() != dst.dtype() || !src.is_contiguous()))
      src = src.to(src.device(), dst.dtype()).contiguous();
  for (auto& [dst, src] : copies) dst.copy_(src);
  return keys;
}

}  // namespace locus::nn
