// model.json and the tensor configs of a .pt2 archive into Program (program.h), with
// nlohmann-json.
//
// Note [Exported programs]
// torch.export.save writes the program as JSON in the serde schema (torch/_export/serde/
// schema.py): unions are objects with exactly one key ("as_tensor", "as_int", ...), enums are
// integers (ScalarType in the schema's own numbering, FLOAT = 7), and an argument equal to its
// default is left out of a node's inputs, so the targets' readers supply PyTorch's defaults
// (src/export/aten_targets.cpp). The reader is strict: a field of the wrong JSON type, a union
// with other than one key, or a missing required field is an IOError naming the member and the
// field, never a guess. PyTorch refuses another schema major and accepts any minor; so does
// Locus, with the advice to re-save. Graph arguments Locus does not run (subgraphs of control
// flow, custom objects, tokens) are kept as Unsupported and refused by name where a node reads
// them.

#include "src/export/program.h"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "locus/errors.h"

namespace locus::exported {
namespace {

using json = nlohmann::ordered_json;

// Errors carry the path of the field inside the JSON, so a malformed file names where.
class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw IOError(where_ + ": " + (field.empty() ? "" : field + ": ") + problem);
  }

  const json& member(const json& object, const char* key, const std::string& field) const {
    if (!object.is_object()) fail(field, "expected an object");
    const auto it = object.find(key);
    if (it == object.end()) fail(field, std::string("has no '") + key + "'");
    return *it;
  }

  const json* optional_member(const json& object, const char* key) const {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  int64_t integer(const json& v, const std::string& field) const {
    if (!v.is_number_integer()) fail(field, "expected an integer");
    return v.get<int64_t>();
  }
  double real(const json& v, const std::string& field) const {
    if (v.is_number()) return v.get<double>();
    // Python's json writes inf and nan as bare words, which strict JSON cannot hold: PyTorch's
    // serializer spells them as strings ("Infinity", "-Infinity", "NaN").
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
      if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
    }
    fail(field, "expected a number");
  }
  bool boolean(const json& v, const std::string& field) const {
    if (!v.is_boolean()) fail(field, "expected true or false");
    return v.get<bool>();
  }
  std::string text(const json& v, const std::string& field) const {
    if (!v.is_string()) fail(field, "expected a string");
    return v.get<std::string>();
  }
  const json& array(const json& v, const std::string& field) const {
    if (!v.is_array()) fail(field, "expected an array");
    return v;
  }

  // A union: its one key and value.
  std::pair<std::string, const json*> one_of(const json& v, const std::string& field) const {
    if (!v.is_object()) fail(field, "expected an object with one key");
    const json* value = nullptr;
    std::string key;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it->is_null()) continue;  // PyTorch writes the union's other fields as null in some versions
      if (value) fail(field, "a union with more than one key ('" + key + "', '" + it.key() + "')");
      key = it.key(), value = &*it;
    }
    if (!value) fail(field, "an empty union");
    return {key, value};
  }

  std::string tensor_name(const json& v, const std::string& field) const {
    return text(member(v, "name", field), field + ".name");
  }

  SymSize sym_size(const json& v, const std::string& field) const {
    const auto [key, value] = one_of(v, field);
    SymSize s;
    if (key == "as_int") s.value = integer(*value, field + ".as_int");
    else if (key == "as_expr") s.expression = text(member(*value, "expr_str", field), field + ".as_expr.expr_str");
    else fail(field, "unknown size kind '" + key + "'");
    return s;
  }

  TensorMeta tensor_meta(const json& v, const std::string& field) const {
    TensorMeta m;
    m.dtype = static_cast<int>(integer(member(v, "dtype", field), field + ".dtype"));
    const json& sizes = array(member(v, "sizes", field), field + ".sizes");
    for (size_t i = 0; i < sizes.size(); ++i) m.sizes.push_back(sym_size(sizes[i], field + ".sizes[" + std::to_string(i) + "]"));
    if (const json* strides = optional_member(v, "strides")) {
      array(*strides, field + ".strides");
      for (size_t i = 0; i < strides->size(); ++i)
        m.strides.push_back(sym_size((*strides)[i], field + ".strides[" + std::to_string(i) + "]"));
    }
    if (const json* offset = optional_member(v, "storage_offset")) m.storage_offset = sym_size(*offset, field + ".storage_offset");
    if (const json* rg = optional_member(v, "requires_grad")) m.requires_grad = boolean(*rg, field + ".requires_grad");
    if (const json* layout = optional_member(v, "layout")) {
      const int64_t l = integer(*layout, field + ".layout");
      if (l != 7 && l != 0) fail(field + ".layout", "layout " + std::to_string(l) + " is not a strided tensor");
    }
    return m;
  }

  Argument argument(const json& v, const std::string& field) const {
    const auto [key, value] = one_of(v, field);
    const std::string at = field + "." + key;
    Argument a;
    using K = Argument::Kind;
    if (key == "as_none") {
      a.kind = K::None;
    } else if (key == "as_tensor") {
      a.kind = K::Tensor, a.name = tensor_name(*value, at);
    } else if (key == "as_tensors") {
      a.kind = K::Tensors;
      for (const json& t : array(*value, at)) a.names.push_back(tensor_name(t, at));
    } else if (key == "as_optional_tensors") {
      a.kind = K::OptionalTensors;
      for (const json& t : array(*value, at)) {
        const auto [k, inner] = one_of(t, at);
        a.names.push_back(k == "as_tensor" ? tensor_name(*inner, at) : std::string());
      }
    } else if (key == "as_optional_tensor") {
      const auto [k, inner] = one_of(*value, at);
      if (k == "as_tensor") a.kind = K::Tensor, a.name = tensor_name(*inner, at);
      else a.kind = K::None;
    } else if (key == "as_int") {
      a.kind = K::Int, a.integer = integer(*value, at);
    } else if (key == "as_ints") {
      a.kind = K::Ints;
      for (const json& i : array(*value, at)) a.integers.push_back(integer(i, at));
    } else if (key == "as_float") {
      a.kind = K::Float, a.real = real(*value, at);
    } else if (key == "as_floats") {
      a.kind = K::Floats;
      for (const json& f : array(*value, at)) a.reals.push_back(real(f, at));
    } else if (key == "as_bool") {
      a.kind = K::Bool, a.integer = boolean(*value, at);
    } else if (key == "as_bools") {
      a.kind = K::Bools;
      for (const json& b : array(*value, at)) a.integers.push_back(boolean(b, at));
    } else if (key == "as_string") {
      a.kind = K::String, a.name = text(*value, at);
    } else if (key == "as_sym_int") {
      a.kind = K::SymInt;
      const auto [k, inner] = one_of(*value, at);
      if (k == "as_name") a.name = text(*inner, at);
      else a.integer = integer(*inner, at);
    } else if (key == "as_sym_ints") {
      a.kind = K::SymInts;
      for (const json& s : array(*value, at)) {
        const auto [k, inner] = one_of(s, at);
        a.names.push_back(k == "as_name" ? text(*inner, at) : std::string());
        a.integers.push_back(k == "as_name" ? 0 : integer(*inner, at));
      }
    } else if (key == "as_scalar_type") {
      a.kind = K::ScalarType, a.integer = integer(*value, at);
    } else if (key == "as_memory_format") {
      a.kind = K::MemoryFormat, a.integer = integer(*value, at);
    } else if (key == "as_layout") {
      a.kind = K::Layout, a.integer = integer(*value, at);
    } else if (key == "as_device") {
      a.kind = K::Device;
      a.device = text(member(*value, "type", at), at + ".type");
      if (const json* index = optional_member(*value, "index")) a.device += ":" + std::to_string(integer(*index, at + ".index"));
    } else {
      a.kind = K::Unsupported, a.unsupported = key;
    }
    return a;
  }

  Node node(const json& v, const std::string& field) const {
    Node n;
    n.target = text(member(v, "target", field), field + ".target");
    if (const json* name = optional_member(v, "name")) n.name = text(*name, field + ".name");
    const json& inputs = array(member(v, "inputs", field), field + ".inputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string at = field + ".inputs[" + std::to_string(i) + "]";
      n.inputs.push_back({text(member(inputs[i], "name", at), at + ".name"), argument(member(inputs[i], "arg", at), at + ".arg")});
    }
    const json& outputs = array(member(v, "outputs", field), field + ".outputs");
    for (size_t i = 0; i < outputs.size(); ++i) n.outputs.push_back(argument(outputs[i], field + ".outputs[" + std::to_string(i) + "]"));
    return n;
  }

  InputSpec input_spec(const json& v, const std::string& field) const {
    const auto [key, value] = one_of(v, field);
    const std::string at = field + "." + key;
    InputSpec s;
    using K = InputSpec::Kind;
    if (key == "user_input") {
      s.kind = K::User;
      const Argument a = argument(member(*value, "arg", at), at + ".arg");
      s.arg = a.kind == Argument::Kind::Tensor || a.kind == Argument::Kind::SymInt ? a.name : std::string();
    } else if (key == "parameter") {
      s.kind = K::Parameter, s.arg = tensor_name(member(*value, "arg", at), at + ".arg");
      s.target = text(member(*value, "parameter_name", at), at + ".parameter_name");
    } else if (key == "buffer") {
      s.kind = K::Buffer, s.arg = tensor_name(member(*value, "arg", at), at + ".arg");
      s.target = text(member(*value, "buffer_name", at), at + ".buffer_name");
      if (const json* p = optional_member(*value, "persistent")) s.persistent = boolean(*p, at + ".persistent");
    } else if (key == "tensor_constant") {
      s.kind = K::TensorConstant, s.arg = tensor_name(member(*value, "arg", at), at + ".arg");
      s.target = text(member(*value, "tensor_constant_name", at), at + ".tensor_constant_name");
    } else if (key == "constant_input") {
      s.kind = K::ConstantInput, s.arg = text(member(*value, "name", at), at + ".name");
    } else if (key == "token") {
      s.kind = K::Token;
    } else if (key == "custom_obj") {
      s.kind = K::CustomObject;
    } else {
      fail(field, "unknown input kind '" + key + "'");
    }
    return s;
  }

  OutputSpec output_spec(const json& v, const std::string& field) const {
    const auto [key, value] = one_of(v, field);
    const std::string at = field + "." + key;
    OutputSpec s;
    using K = OutputSpec::Kind;
    const json& arg = member(*value, "arg", at);
    if (key == "user_output") {
      s.kind = K::User, s.arg = argument(arg, at + ".arg");
      return s;
    }
    if (key == "token") {
      s.kind = K::Token;
      return s;
    }
    s.arg.kind = Argument::Kind::Tensor, s.arg.name = tensor_name(arg, at + ".arg");
    if (key == "buffer_mutation") s.kind = K::BufferMutation, s.target = text(member(*value, "buffer_name", at), at);
    else if (key == "user_input_mutation") s.kind = K::UserInputMutation, s.target = text(member(*value, "user_input_name", at), at);
    else if (key == "parameter_mutation") s.kind = K::ParameterMutation, s.target = text(member(*value, "parameter_name", at), at);
    else if (key == "loss_output") s.kind = K::Loss;
    else if (key == "gradient_to_parameter" || key == "gradient_to_user_input") s.kind = K::Gradient;
    else fail(field, "unknown output kind '" + key + "'");
    return s;
  }

 private:
  std::string where_;
};

json parse_json(const std::string& text, const std::string& where) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw IOError(where + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace

Program parse_program(const std::string& text, const std::string& where) {
  const Reader r(where);
  const json root = parse_json(text, where);
  Program p;
  const json& version = r.member(root, "schema_version", "");
  p.schema_major = static_cast<int>(r.integer(r.member(version, "major", "schema_version"), "schema_version.major"));
  p.schema_minor = static_cast<int>(r.integer(r.member(version, "minor", "schema_version"), "schema_version.minor"));
  if (p.schema_major != kSchemaMajor)
    r.fail("", "the program's serialization schema is version " + std::to_string(p.schema_major) + "." +
                   std::to_string(p.schema_minor) + "; Locus reads version " + std::to_string(kSchemaMajor) +
                   ".x: re-save it with torch >= 2.5 (torch.export.save)");
  if (const json* v = r.optional_member(root, "torch_version")) p.torch_version = r.text(*v, "torch_version");
  if (const json* v = r.optional_member(root, "verifiers"))
    for (const json& name : r.array(*v, "verifiers")) p.verifiers.push_back(r.text(name, "verifiers"));
  const json& module = r.member(root, "graph_module", "");
  const json& graph = r.member(module, "graph", "graph_module");
  const std::string g = "graph_module.graph";
  for (const json& a : r.array(r.member(graph, "inputs", g), g + ".inputs")) p.inputs.push_back(r.argument(a, g + ".inputs"));
  for (const json& a : r.array(r.member(graph, "outputs", g), g + ".outputs")) p.outputs.push_back(r.argument(a, g + ".outputs"));
  const json& nodes = r.array(r.member(graph, "nodes", g), g + ".nodes");
  for (size_t i = 0; i < nodes.size(); ++i) p.nodes.push_back(r.node(nodes[i], g + ".nodes[" + std::to_string(i) + "]"));
  const json& values = r.member(graph, "tensor_values", g);
  if (!values.is_object()) r.fail(g + ".tensor_values", "expected an object");
  for (auto it = values.begin(); it != values.end(); ++it)
    p.tensor_values[it.key()] = r.tensor_meta(*it, g + ".tensor_values." + it.key());
  const json& signature = r.member(module, "signature", "graph_module");
  const std::string s = "graph_module.signature";
  const json& in = r.array(r.member(signature, "input_specs", s), s + ".input_specs");
  for (size_t i = 0; i < in.size(); ++i) p.input_specs.push_back(r.input_spec(in[i], s + ".input_specs[" + std::to_string(i) + "]"));
  const json& out = r.array(r.member(signature, "output_specs", s), s + ".output_specs");
  for (size_t i = 0; i < out.size(); ++i) p.output_specs.push_back(r.output_spec(out[i], s + ".output_specs[" + std::to_string(i) + "]"));
  if (const json* ranges = r.optional_member(root, "range_constraints")) {
    if (!ranges->is_object()) r.fail("range_constraints", "expected an object");
    for (auto it = ranges->begin(); it != ranges->end(); ++it) {
      RangeConstraint c;
      if (const json* lo = r.optional_member(*it, "min_val")) c.min = r.integer(*lo, "range_constraints." + it.key() + ".min_val");
      if (const json* hi = r.optional_member(*it, "max_val")) c.max = r.integer(*hi, "range_constraints." + it.key() + ".max_val");
      p.range_constraints[it.key()] = c;
    }
  }
  if (const json* calls = r.optional_member(module, "module_call_graph")) {
    for (const json& entry : r.array(*calls, "graph_module.module_call_graph")) {
      const json* fqn = r.optional_member(entry, "fqn");
      const json* sig = r.optional_member(entry, "signature");
      if (!fqn || !fqn->is_string() || !fqn->get<std::string>().empty() || !sig) continue;
      if (const json* names = r.optional_member(*sig, "forward_arg_names"))
        for (const json& n : r.array(*names, "forward_arg_names")) p.forward_arg_names.push_back(r.text(n, "forward_arg_names"));
    }
  }
  return p;
}

std::vector<std::pair<std::string, StoredTensor>> parse_tensor_config(const std::string& text, const std::string& where) {
  const Reader r(where);
  const json root = parse_json(text, where);
  const json& config = r.member(root, "config", "");
  if (!config.is_object()) r.fail("config", "expected an object");
  std::vector<std::pair<std::string, StoredTensor>> out;
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string at = "config." + it.key();
    StoredTensor t;
    t.path = r.text(r.member(*it, "path_name", at), at + ".path_name");
    if (const json* param = r.optional_member(*it, "is_param")) t.is_param = r.boolean(*param, at + ".is_param");
    if (const json* pickle = r.optional_member(*it, "use_pickle"); pickle && r.boolean(*pickle, at + ".use_pickle"))
      r.fail(at, "a pickled payload; Locus reads raw tensor bytes only (re-save without pickled constants)");
    t.meta = r.tensor_meta(r.member(*it, "tensor_meta", at), at + ".tensor_meta");
    out.emplace_back(it.key(), std::move(t));
  }
  return out;
}

}  // namespace locus::exported
