// The graph runner and the arguments' readers (interpreter.h).

#include "src/export/interpreter.h"

#include <cstdint>
#include <set>

#include "locus/errors.h"
#include "locus/factories.h"

namespace locus::exported {

std::optional<DType> dtype_of_scalar_type(int code) {
  switch (code) {
    case 1: return DType::UInt8;
    case 2: return DType::Int8;
    case 3: return DType::Int16;
    case 4: return DType::Int32;
    case 5: return DType::Int64;
    case 6: return DType::Float16;
    case 7: return DType::Float32;
    case 8: return DType::Float64;
    case 12: return DType::Bool;
    case 13: return DType::BFloat16;
    default: return std::nullopt;
  }
}

Call::Call(const Node& node, const std::map<std::string, Value>& values, const RunContext& context,
           const std::map<std::string, size_t>* read)
    : node_(node), values_(values), context_(context), read_(read) {}

bool Call::output_read(size_t k) const {
  if (!read_ || k >= node_.outputs.size()) return true;
  const Argument& out = node_.outputs[k];
  if (read_->contains(out.name)) return true;
  for (const std::string& n : out.names)
    if (read_->contains(n)) return true;
  return false;
}

void Call::fail(const std::string& problem) const {
  throw NotImplementedError("node '" + node_.name + "' (" + node_.target + "): " + problem);
}

const NamedArgument* Call::find(const char* name) const {
  for (const NamedArgument& a : node_.inputs)
    if (a.name == name) return &a;
  return nullptr;
}

bool Call::has(const char* name) const {
  const NamedArgument* a = find(name);
  return a && a->arg.kind != Argument::Kind::None;
}

Value Call::resolve(const Argument& a, const char* name) const {
  using K = Argument::Kind;
  const auto lookup = [&](const std::string& n) -> const Value& {
    const auto it = values_.find(n);
    if (it == values_.end()) fail(std::string("argument '") + name + "' reads '" + n + "', which no earlier node made");
    return it->second;
  };
  switch (a.kind) {
    case K::None: return std::monostate{};
    case K::Tensor: return lookup(a.name);
    case K::Int: return a.integer;
    case K::Float: return a.real;
    case K::Bool: return a.integer != 0;
    case K::SymInt: return a.name.empty() ? Value(a.integer) : lookup(a.name);
    default: fail(std::string("argument '") + name + "' is not a single value");
  }
}

Tensor Call::tensor(const char* name) const {
  const Tensor t = optional_tensor(name);
  if (!t.defined()) fail(std::string("argument '") + name + "' must be a tensor");
  return t;
}

Tensor Call::optional_tensor(const char* name) const {
  const NamedArgument* a = find(name);
  if (!a || a->arg.kind == Argument::Kind::None) return Tensor();
  if (a->arg.kind != Argument::Kind::Tensor) fail(std::string("argument '") + name + "' must be a tensor");
  const Value v = resolve(a->arg, name);
  if (const Tensor* t = std::get_if<Tensor>(&v)) return *t;
  fail(std::string("argument '") + name + "' does not hold a tensor");
}

std::string Call::tensor_name(const char* name) const {
  const NamedArgument* a = find(name);
  return a && a->arg.kind == Argument::Kind::Tensor ? a->arg.name : std::string();
}

std::vector<Tensor> Call::tensors(const char* name) const {
  const NamedArgument* a = find(name);
  if (!a || (a->arg.kind != Argument::Kind::Tensors && a->arg.kind != Argument::Kind::OptionalTensors))
    fail(std::string("argument '") + name + "' must be a list of tensors");
  std::vector<Tensor> out;
  for (const std::string& n : a->arg.names) {
    if (n.empty()) {
      out.emplace_back();
      continue;
    }
    Argument one;
    one.kind = Argument::Kind::Tensor, one.name = n;
    const Value v = resolve(one, name);
    const Tensor* t = std::get_if<Tensor>(&v);
    if (!t) fail(std::string("argument '") + name + "' holds a value that is not a tensor");
    out.push_back(*t);
  }
  return out;
}

std::optional<int64_t> Call::optional_integer(const char* name) const {
  const NamedArgument* a = find(name);
  if (!a || a->arg.kind == Argument::Kind::None) return std::nullopt;
  const Value v = resolve(a->arg, name);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
  if (const bool* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  fail(std::string("argument '") + name + "' must be an integer");
}

int64_t Call::integer(const char* name, std::optional<int64_t> fallback) const {
  if (const auto i = optional_integer(name)) return *i;
  if (!fallback) fail(std::string("argument '") + name + "' is required");
  return *fallback;
}

std::vector<int64_t> Call::integers(const char* name, std::optional<std::vector<int64_t>> fallback) const {
  const NamedArgument* a = find(name);
  if (!a || a->arg.kind == Argument::Kind::None) {
    if (!fallback) fail(std::string("argument '") + name + "' is required");
    return *fallback;
  }
  using K = Argument::Kind;
  if (a->arg.kind == K::Ints) return a->arg.integers;
  if (a->arg.kind == K::Int || a->arg.kind == K::SymInt) return {integer(name)};
  if (a->arg.kind != K::SymInts) fail(std::string("argument '") + name + "' must be a list of integers");
  std::vector<int64_t> out;
  for (size_t k = 0; k < a->arg.names.size(); ++k) {
    if (a->arg.names[k].empty()) {
      out.push_back(a->arg.integers[k]);
      continue;
    }
    Argument one;
    one.kind = K::SymInt, one.name = a->arg.names[k];
    const Value v = resolve(one, name);
    const int64_t* i = std::get_if<int64_t>(&v);
    if (!i) fail(std::string("argument '") + name + "' holds a size that is not an integer");
    out.push_back(*i);
  }
  return out;
}

std::optional<double> Call::optional_real(const char* name) const {
  const NamedArgument* a = find(name);
  if (!a || a->arg.kind == Argument::Kind::None) return std::nullopt;
  const Value v = resolve(a->arg, name);
  if (const double* d = std::get_if<double>(&v)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  fail(std::string("argument '") + name + "' must be a number");
}

double Call::real(const char* name, std::optional<double> fallback) const {
  if (const auto d = optional_real(name)) return *d;
  if (!fallback) fail(std::string("argument '") + name + "' is required");
  return *fallback;
}

bool Call::boolean(const char* name, std::optional<bool> fallback) const {
  const NamedArgument* a = find(name);
  if (!a || a->arg.kind == Argument::Kind::None) {
    if (!fallback) fail(std::string("argument '") + name + "' is required");
    return *fallback;
  }
  const Value v = resolve(a->arg, name);
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i != 0;
  fail(std::string("argument '") + name + "' must be a bool");
}

Scalar Call::scalar(const char* name) const {
  const NamedArgument* a = find(name);
  if (!a) fail(std::string("argument '") + name + "' is required");
  const Value v = resolve(a->arg, name);
  if (const int64_t* i = std::get_if<int64_t>(&v)) return Scalar(*i);
  if (const double* d = std::get_if<double>(&v)) return Scalar(*d);
  if (const bool* b = std::get_if<bool>(&v)) return Scalar(*b);
  fail(std::string("argument '") + name + "' must be a number");
}

bool Call::is_tensor(const char* name) const {
  const NamedArgument* a = find(name);
  return a && a->arg.kind == Argument::Kind::Tensor;
}

std::optional<DType> Call::dtype(const char* name) const {
  const NamedArgument* a = find(name);
  if (!a || a->arg.kind == Argument::Kind::None) return std::nullopt;
  if (a->arg.kind != Argument::Kind::ScalarType) fail(std::string("argument '") + name + "' must be a dtype");
  const auto d = dtype_of_scalar_type(static_cast<int>(a->arg.integer));
  if (!d) fail("dtype number " + std::to_string(a->arg.integer) + " (the file's ScalarType) has no Locus dtype");
  return d;
}

std::string Call::text(const char* name, const std::string& fallback) const {
  const NamedArgument* a = find(name);
  if (!a || a->arg.kind == Argument::Kind::None) return fallback;
  if (a->arg.kind != Argument::Kind::String) fail(std::string("argument '") + name + "' must be a string");
  return a->arg.name;
}

std::vector<std::string> unsupported_targets(const Program& program) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const Node& n : program.nodes)
    if (!find_target(n.target) && seen.insert(n.target).second) out.push_back(n.target);
  return out;
}

namespace {

// Binds a node's results to the names its outputs declare.
void bind(const Call& call, std::vector<Value> results, std::map<std::string, Value>& values) {
  const Node& node = call.node();
  using K = Argument::Kind;
  if (results.size() != node.outputs.size())
    call.fail("the target gave " + std::to_string(results.size()) + " results for " + std::to_string(node.outputs.size()) +
              " outputs");
  for (size_t k = 0; k < results.size(); ++k) {
    const Argument& out = node.outputs[k];
    if (out.kind == K::Tensor || out.kind == K::SymInt) {
      if (!out.name.empty()) values[out.name] = std::move(results[k]);
    } else if (out.kind == K::Tensors) {
      auto* list = std::get_if<std::vector<Tensor>>(&results[k]);
      if (!list || list->size() != out.names.size())
        call.fail("the target's list of results does not match the node's " + std::to_string(out.names.size()) + " outputs");
      for (size_t i = 0; i < list->size(); ++i) values[out.names[i]] = (*list)[i];
    } else if (out.kind != K::None) {
      call.fail("an output of a kind Locus does not bind");
    }
  }
}

}  // namespace

namespace {

// The names a node reads.
void names_read(const Node& node, const std::function<void(const std::string&)>& f) {
  using K = Argument::Kind;
  for (const NamedArgument& a : node.inputs) {
    if (a.arg.kind == K::Tensor || (a.arg.kind == K::SymInt && !a.arg.name.empty())) f(a.arg.name);
    if (a.arg.kind == K::Tensors || a.arg.kind == K::OptionalTensors || a.arg.kind == K::SymInts)
      for (const std::string& n : a.arg.names)
        if (!n.empty()) f(n);
  }
}

}  // namespace

std::vector<Value> run_graph(const Program& program, std::map<std::string, Value> values, const RunContext& context) {
  // Each value is dropped after the last node that reads it (the graph's outputs are kept), so an
  // inference keeps only what is still to be read, as PyTorch's interpreter does; under autograd
  // the nodes keep what their backward needs.
  // A name's last reader; the program's outputs are read after every node (kept to the end).
  constexpr size_t kByTheOutputs = SIZE_MAX;
  std::map<std::string, size_t> last_read;
  for (size_t i = 0; i < program.nodes.size(); ++i) names_read(program.nodes[i], [&](const std::string& n) { last_read[n] = i; });
  for (const Argument& a : program.outputs) {
    last_read[a.name] = kByTheOutputs;
    for (const std::string& n : a.names) last_read[n] = kByTheOutputs;
  }
  std::vector<std::vector<std::string>> dies_after(program.nodes.size());
  for (const auto& [name, i] : last_read)
    if (i != kByTheOutputs) dies_after[i].push_back(name);
  for (size_t i = 0; i < program.nodes.size(); ++i) {
    const Node& node = program.nodes[i];
    const Call call(node, values, context, &last_read);
    for (const NamedArgument& a : node.inputs)
      if (a.arg.kind == Argument::Kind::Unsupported)
        call.fail("argument '" + a.name + "' is a " + a.arg.unsupported +
                  ", which Locus does not run (control flow, custom objects and tokens are outside what it imports)");
    const Target* target = find_target(node.target);
    if (!target) call.fail("Locus does not support this operator (`locus info` lists a file's operators and which it supports)");
    bind(call, (*target)(call), values);
    for (const std::string& name : dies_after[i]) values.erase(name);
  }
  std::vector<Value> out;
  for (const Argument& a : program.outputs) {
    using K = Argument::Kind;
    if (a.kind == K::Tensor || a.kind == K::SymInt) {
      const auto it = values.find(a.name);
      if (it == values.end()) throw NotImplementedError("the program's output '" + a.name + "' is made by no node");
      out.push_back(it->second);
    } else if (a.kind == K::None) {
      out.emplace_back();
    } else {
      throw NotImplementedError("the program returns a value of a kind Locus does not return");
    }
  }
  return out;
}

}  // namespace locus::exported
