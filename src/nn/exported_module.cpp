// nn::ExportedModule and locus::load_exported: a torch.export program as a module (exported.h).
//
// Note [Exported modules]
// The module registers the program's parameters and buffers under their state_dict names,
// making a plain submodule for each dotted prefix ("blocks.0.ln1.weight" lives in blocks -> 0 ->
// ln1), in the signature's order, which is the exported module's registration order; tensor
// constants are non-persistent buffers (they follow .to() but stay out of state_dict, as in
// PyTorch). Each forward binds the graph's inputs from the module's registry by name, so a
// clone (DataParallel's replicas), .to() or load_state_dict is what the next forward reads, then
// runs the graph (src/export/interpreter.h) and writes back the buffer mutations the signature
// lists (the functional form's running statistics). The mode starts as exported (training when
// a dropout or batch norm node was recorded in training) and then follows train()/eval() (Note
// [Exported modes and devices]).

#include "locus/nn/exported.h"

#include <algorithm>
#include <set>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "src/export/interpreter.h"
#include "src/export/pt2_file.h"
#include "src/export/size_expression.h"

namespace locus {
namespace nn {
namespace {

using exported::Argument;
using exported::InputSpec;
using exported::OutputSpec;
using exported::Program;

// A submodule that only holds the state under one dotted prefix ("blocks" -> "0" -> "ln1"), with
// its registration open to the exported module that builds it.
class Submodule final : public Module {
 public:
  using Module::register_buffer;
  using Module::register_module;
  using Module::register_parameter;
  std::string name() const override { return "Module"; }
};

// Whether a dropout or batch norm node was recorded in training mode (either graph form).
bool exported_in_training(const Program& p) {
  for (const exported::Node& n : p.nodes) {
    if (n.target == "torch.ops.aten._native_batch_norm_legit_functional.default") return true;
    for (const exported::NamedArgument& a : n.inputs)
      if ((a.name == "train" || a.name == "training") && a.arg.kind == Argument::Kind::Bool && a.arg.integer &&
          (n.target == "torch.ops.aten.dropout.default" || n.target == "torch.ops.aten.native_dropout.default" ||
           n.target == "torch.ops.aten.batch_norm.default"))
        return true;
  }
  return false;
}

// An eval-mode export decomposed to core ATen: its dropout is gone and its batch norms cannot
// update running statistics, so it cannot train as the Python module would.
bool is_core_eval_export(const Program& p) {
  return std::find(p.verifiers.begin(), p.verifiers.end(), "ATEN") != p.verifiers.end() && !exported_in_training(p);
}

// Note [Channels-last programs]
// A program with 2-d convolutions runs its 4-d floating inputs channels-last on the CPU: the
// convolutions, batch norms, ReLUs and residual adds then keep NHWC from the first layer to the
// last (Note [Channels-last outputs]), and oneDNN's convolutions run on it without reordering
// their activations. torch.compile's Inductor makes the same choice for convolutional graphs.
// The imported ResNet-18 forward takes 9% less time for it, its training step 5%
// (docs/performance.md). A 4-d output comes back contiguous, as the program's Python module
// returns it for a contiguous input; the values are those of the NCHW run to rounding.
bool has_convolutions(const Program& p) {
  return std::any_of(p.nodes.begin(), p.nodes.end(), [](const exported::Node& n) {
    return n.target == "torch.ops.aten.conv2d.default" || n.target == "torch.ops.aten.convolution.default";
  });
}

std::string dims_text(const Shape& s) {
  std::string out = "[";
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + "]";
}

}  // namespace

ExportedModuleImpl::ExportedModuleImpl(std::shared_ptr<const exported::Pt2Contents> contents, std::optional<Device> device)
    : contents_(std::move(contents)) {
  const Program& p = contents_->program;
  convolutional_ = has_convolutions(p);
  std::map<std::string, Tensor> weights(contents_->weights.begin(), contents_->weights.end());
  std::map<std::string, Tensor> constants(contents_->constants.begin(), contents_->constants.end());
  for (const InputSpec& s : p.input_specs) {
    switch (s.kind) {
      case InputSpec::Kind::Parameter:
      case InputSpec::Kind::Buffer: {
        const auto it = weights.find(s.target);
        if (it == weights.end())
          throw IOError("the program's " + std::string(s.kind == InputSpec::Kind::Parameter ? "parameter" : "buffer") + " '" +
                        s.target + "' is not among the archive's weights");
        add_state(s.target, it->second, s.kind == InputSpec::Kind::Parameter ? StateKind::Parameter : StateKind::Buffer,
                  s.persistent);
        if (s.kind == InputSpec::Kind::Buffer) buffer_of_input_[s.arg] = s.target;
        break;
      }
      case InputSpec::Kind::TensorConstant: {
        const auto it = constants.find(s.target);
        if (it == constants.end()) throw IOError("the program's constant '" + s.target + "' is not among the archive's constants");
        add_state(s.target, it->second, StateKind::Constant);
        break;
      }
      case InputSpec::Kind::User:
        break;
      case InputSpec::Kind::ConstantInput:
        throw NotImplementedError("the program takes a constant input ('" + s.arg + "'), which Locus does not bind");
      case InputSpec::Kind::Token:
        throw NotImplementedError("the program threads effect tokens (side-effecting custom ops), which Locus does not run");
      case InputSpec::Kind::CustomObject:
        throw NotImplementedError("the program takes a custom object (a TorchBind class), which Locus does not run");
    }
  }
  for (const OutputSpec& s : p.output_specs)
    if (s.kind == OutputSpec::Kind::Loss || s.kind == OutputSpec::Kind::Gradient || s.kind == OutputSpec::Kind::Token)
      throw NotImplementedError("the program is a joint forward-backward export (it returns a loss or gradients); export "
                                "the forward only: Locus differentiates it itself");
  train(exported_in_training(p));
  if (device && *device != Device(DeviceType::CPU)) to(*device);
}

void ExportedModuleImpl::add_state(const std::string& name, const Tensor& value, StateKind kind, bool persistent) {
  const size_t dot = name.find('.');
  const std::string head = name.substr(0, dot);
  if (dot == std::string::npos) {
    if (kind == StateKind::Parameter) register_parameter(name, value);
    else register_buffer(name, value, kind == StateKind::Buffer && persistent);
    return;
  }
  // Down the dotted prefix, making the submodules on the way (Note [Exported modules]).
  const auto child_of = [](const Module& m, const std::string& part) -> std::shared_ptr<Submodule> {
    const auto children = m.named_children();
    return children.contains(part) ? std::dynamic_pointer_cast<Submodule>(children.at(part)) : nullptr;
  };
  std::shared_ptr<Submodule> m = child_of(*this, head);
  if (!m) m = register_module(head, std::make_shared<Submodule>());
  size_t start = dot + 1;
  for (size_t next = name.find('.', start); next != std::string::npos; start = next + 1, next = name.find('.', start)) {
    const std::string part = name.substr(start, next - start);
    std::shared_ptr<Submodule> child = child_of(*m, part);
    m = child ? child : m->register_module(part, std::make_shared<Submodule>());
  }
  const std::string leaf = name.substr(start);
  if (kind == StateKind::Parameter) m->register_parameter(leaf, value);
  else m->register_buffer(leaf, value, kind == StateKind::Buffer && persistent);
}

Tensor ExportedModuleImpl::state_tensor(const std::string& name) const {
  const Module* m = this;
  size_t start = 0;
  for (size_t dot = name.find('.'); dot != std::string::npos; start = dot + 1, dot = name.find('.', start)) {
    const auto children = m->named_children();
    const std::string part = name.substr(start, dot - start);
    if (!children.contains(part)) throw ValueError("ExportedModule: the module has no submodule holding '" + name + "'");
    m = children.at(part).get();
  }
  const std::string leaf = name.substr(start);
  const auto parameters = m->named_parameters(false);
  if (parameters.contains(leaf)) return parameters.at(leaf);
  const auto buffers = m->named_buffers(false);
  if (buffers.contains(leaf)) return buffers.at(leaf);
  throw ValueError("ExportedModule: the module has no parameter or buffer '" + name + "'");
}

std::vector<Tensor> ExportedModuleImpl::forward(const std::vector<Tensor>& inputs) {
  const Program& p = contents_->program;
  std::map<std::string, exported::Value> values;
  std::map<std::string, int64_t> symbols;
  // An input dimension whose size is an expression of symbols (a derived torch.export.Dim).
  struct DerivedSize {
    std::string input;
    size_t dim;
    int64_t got;
    const std::string* expression;
  };
  std::vector<DerivedSize> derived;
  size_t next_user = 0, user_count = 0;
  for (const InputSpec& s : p.input_specs) user_count += s.kind == InputSpec::Kind::User;
  if (inputs.size() != user_count)
    throw ValueError("ExportedModule: the program takes " + std::to_string(user_count) + " input(s) (" +
                     [&] {
                       std::string names;
                       for (const auto& n : input_names()) names += (names.empty() ? "" : ", ") + n;
                       return names;
                     }() +
                     "), got " + std::to_string(inputs.size()));
  Device device = inputs.empty() ? Device(DeviceType::CPU) : inputs[0].device();
  for (const InputSpec& s : p.input_specs) {
    if (s.kind == InputSpec::Kind::Parameter || s.kind == InputSpec::Kind::Buffer || s.kind == InputSpec::Kind::TensorConstant) {
      const Tensor t = state_tensor(s.target);
      device = t.device();
      values[s.arg] = t;
      continue;
    }
    if (s.kind != InputSpec::Kind::User) continue;
    const Tensor& x = inputs[next_user++];
    const std::string& name = s.arg;
    if (!x.defined()) throw ValueError("ExportedModule: input '" + name + "' is an undefined tensor");
    if (const auto meta = p.tensor_values.find(name); meta != p.tensor_values.end()) {
      const exported::TensorMeta& m = meta->second;
      if (const auto dtype = exported::dtype_of_scalar_type(m.dtype); dtype && *dtype != x.dtype())
        throw DTypeError("ExportedModule: input '" + name + "' is " + std::string(dtype_name(x.dtype())) +
                         " but the program takes " + std::string(dtype_name(*dtype)));
      if (static_cast<size_t>(x.dim()) != m.sizes.size())
        throw ShapeError("ExportedModule: input '" + name + "' has " + std::to_string(x.dim()) + " dimensions " +
                         dims_text(x.shape()) + " but the program takes " + std::to_string(m.sizes.size()));
      for (size_t d = 0; d < m.sizes.size(); ++d) {
        const int64_t got = x.size(static_cast<int64_t>(d));
        const exported::SymSize& want = m.sizes[d];
        if (want.value) {
          if (got != *want.value)
            throw ShapeError("ExportedModule: input '" + name + "' has size " + std::to_string(got) + " in dimension " +
                             std::to_string(d) + " but the program was exported with " + std::to_string(*want.value) +
                             " there (a static dimension; export with a torch.export.Dim to make it dynamic)");
          continue;
        }
        const std::string symbol = exported::symbol_of(want.expression);
        if (symbol.empty()) {  // an expression of symbols: checked once the inputs have bound them
          derived.push_back({name, d, got, &want.expression});
          continue;
        }
        if (const auto bound = symbols.find(symbol); bound != symbols.end() && bound->second != got)
          throw ShapeError("ExportedModule: input '" + name + "' has size " + std::to_string(got) + " in dimension " +
                           std::to_string(d) + ", but dimension " + symbol + " is " + std::to_string(bound->second) +
                           " elsewhere in the inputs");
        symbols[symbol] = got;
        if (const auto range = p.range_constraints.find(symbol); range != p.range_constraints.end()) {
          const exported::RangeConstraint& r = range->second;
          if ((r.min && got < *r.min) || (r.max && got > *r.max))
            throw ShapeError("ExportedModule: input '" + name + "' has size " + std::to_string(got) + " in dimension " +
                             std::to_string(d) + ", outside the range [" + (r.min ? std::to_string(*r.min) : "-inf") + ", " +
                             (r.max ? std::to_string(*r.max) : "inf") + "] the program allows for " + symbol);
        }
      }
    }
    const bool channels_last = convolutional_ && x.device().is_cpu() && x.dim() == 4 && x.is_floating_point();
    values[name] = channels_last ? x.contiguous(MemoryFormat::ChannelsLast) : x;
  }
  for (const DerivedSize& s : derived)
    if (const auto want = exported::evaluate_size(*s.expression, symbols); want && want->value != s.got)
      throw ShapeError("ExportedModule: input '" + s.input + "' has size " + std::to_string(s.got) + " in dimension " +
                       std::to_string(s.dim) + ", but the program's size there is " + want->text + " = " +
                       std::to_string(want->value) + " for the sizes the other dimensions give");
  if (is_training() && is_core_eval_export(p))
    throw NotImplementedError(
        "ExportedModule: the program was exported in eval mode and decomposed to core ATen (run_decompositions), "
        "which drops its dropout and its batch norms' running-statistics updates, so train() cannot run it as the "
        "Python module would; export the model in training mode, or save the export() graph without "
        "run_decompositions()");
  exported::RunContext context;
  context.training = is_training();
  context.device = device;
  context.buffer_of_input = &buffer_of_input_;
  std::vector<exported::Value> results = exported::run_graph(p, std::move(values), context);
  // The outputs come in the signature's order: mutations first, then the user outputs.
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < p.output_specs.size() && k < results.size(); ++k) {
    const OutputSpec& s = p.output_specs[k];
    const Tensor* t = std::get_if<Tensor>(&results[k]);
    if (s.kind == OutputSpec::Kind::BufferMutation || s.kind == OutputSpec::Kind::ParameterMutation) {
      if (!t) throw NotImplementedError("ExportedModule: the program's update of '" + s.target + "' is not a tensor");
      NoGradGuard no_grad;
      state_tensor(s.target).copy_(*t);
    } else if (s.kind == OutputSpec::Kind::UserInputMutation) {
      throw NotImplementedError("ExportedModule: the program writes into its input '" + s.target +
                                "', which Locus does not do for its caller");
    } else if (t) {
      const bool relaid = convolutional_ && t->suggest_memory_format() == MemoryFormat::ChannelsLast;
      outputs.push_back(relaid ? t->contiguous() : *t);
    } else if (const int64_t* i = std::get_if<int64_t>(&results[k])) {
      outputs.push_back(full(Shape{}, *i, TensorOptions().dtype(kInt64)));
    } else {
      outputs.emplace_back();
    }
  }
  return outputs;
}

Tensor ExportedModuleImpl::forward(const Tensor& input) {
  std::vector<Tensor> out = forward(std::vector<Tensor>{input});
  if (out.size() != 1)
    throw ValueError("ExportedModule: the program returns " + std::to_string(out.size()) +
                     " outputs; call forward({inputs...}) for the list");
  return out[0];
}

std::vector<std::string> ExportedModuleImpl::input_names() const {
  std::vector<std::string> names;
  for (const InputSpec& s : contents_->program.input_specs)
    if (s.kind == InputSpec::Kind::User) names.push_back(s.arg);
  return names;
}

std::vector<std::string> ExportedModuleImpl::operators() const {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const exported::Node& n : contents_->program.nodes)
    if (seen.insert(n.target).second) out.push_back(n.target);
  return out;
}

std::vector<std::string> ExportedModuleImpl::unsupported_operators() const {
  return exported::unsupported_targets(contents_->program);
}

std::string ExportedModuleImpl::extra_repr() const {
  std::string names;
  for (const auto& n : input_names()) names += (names.empty() ? "" : ", ") + n;
  return "inputs=[" + names + "], operators=" + std::to_string(operators().size()) +
         (contents_->program.torch_version.empty() ? "" : ", torch=" + contents_->program.torch_version);
}

}  // namespace nn

ExportedSummary summarize_exported(const std::string& path) {
  using exported::InputSpec;
  using exported::OutputSpec;
  using exported::Program;
  const exported::Pt2Contents contents = exported::read_pt2(path);
  const Program& p = contents.program;
  ExportedSummary s;
  s.torch_version = p.torch_version;
  s.schema = std::to_string(p.schema_major) + "." + std::to_string(p.schema_minor);
  for (const auto& v : p.verifiers) s.dialect += (s.dialect.empty() ? "" : ", ") + v;
  std::map<std::string, Tensor> weights(contents.weights.begin(), contents.weights.end());
  std::set<const void*> counted;
  for (const InputSpec& spec : p.input_specs) {
    if (spec.kind == InputSpec::Kind::Parameter) {
      // Tied weights (two names, one stored tensor) count once, as named_parameters() lists them.
      const auto it = weights.find(spec.target);
      if (it != weights.end() && !counted.insert(it->second.impl()).second) continue;
      ++s.parameters;
      if (it != weights.end()) s.parameter_elements += static_cast<size_t>(it->second.numel());
    } else if (spec.kind == InputSpec::Kind::Buffer) {
      ++s.buffers;
    } else if (spec.kind == InputSpec::Kind::User) {
      std::string text = spec.arg;
      if (const auto meta = p.tensor_values.find(spec.arg); meta != p.tensor_values.end()) {
        const auto dtype = exported::dtype_of_scalar_type(meta->second.dtype);
        text += ": " + (dtype ? std::string(dtype_name(*dtype)) : "dtype " + std::to_string(meta->second.dtype)) + " [";
        for (size_t d = 0; d < meta->second.sizes.size(); ++d) {
          const exported::SymSize& size = meta->second.sizes[d];
          text += d ? ", " : "";
          if (size.value) {
            text += std::to_string(*size.value);
            continue;
          }
          // A symbol reads as its name and a derived size as sympy writes its range's key
          // ("2*s77"), so both find their ranges.
          const std::string symbol = exported::size_text(size.expression).value_or(size.expression);
          text += symbol;
          if (const auto r = p.range_constraints.find(symbol); r != p.range_constraints.end())
            text += " in " + (r->second.min ? std::to_string(*r->second.min) : "-inf") + ".." +
                    (r->second.max ? std::to_string(*r->second.max) : "inf");
        }
        text += "]";
      }
      s.inputs.push_back(text);
    }
  }
  for (const OutputSpec& spec : p.output_specs) s.outputs += spec.kind == OutputSpec::Kind::User;
  std::set<std::string> seen;
  for (const exported::Node& n : p.nodes)
    if (seen.insert(n.target).second) s.operators.emplace_back(n.target, exported::find_target(n.target) != nullptr);
  return s;
}

nn::ExportedModule load_exported(const std::string& path, std::optional<Device> device) {
  auto contents = std::make_shared<exported::Pt2Contents>(exported::read_pt2(path));
  const auto unsupported = exported::unsupported_targets(contents->program);
  if (!unsupported.empty()) {
    std::string first_node;
    for (const exported::Node& n : contents->program.nodes)
      if (n.target == unsupported[0]) {
        first_node = n.name;
        break;
      }
    std::string list;
    for (const auto& t : unsupported) list += (list.empty() ? "" : ", ") + t;
    throw NotImplementedError("load_exported('" + path + "'): Locus does not support " + std::to_string(unsupported.size()) +
                              " of the program's operators: " + list + " (first at node '" + first_node + "')");
  }
  return nn::ExportedModule(std::make_shared<nn::ExportedModuleImpl>(std::move(contents), device));
}

}  // namespace locus
