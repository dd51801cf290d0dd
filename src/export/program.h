#pragma once
// A torch.export program as Locus reads it from a .pt2 file's models/model.json (the serde
// schema of torch/_export/serde/schema.py, major version 8): the graph's nodes with their named
// arguments, the signature that maps graph inputs to parameters, buffers, constants and user
// inputs, and the range constraints of its dynamic dimensions. See Note [Exported programs] in
// program.cpp.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace locus::exported {

/// One argument of a node or of the graph (schema.py's Argument union), the kinds the supported
/// targets take; anything else keeps its JSON key in `unsupported` and is refused where it is read.
struct Argument {
  enum class Kind {
    None, Tensor, Tensors, OptionalTensors, Int, Ints, Float, Floats, Bool, Bools, String, SymInt, SymInts,
    ScalarType, MemoryFormat, Layout, Device, Unsupported
  };
  Kind kind = Kind::None;
  std::string name;                ///< Tensor; SymInt when it names a symbol; String's value
  std::vector<std::string> names;  ///< Tensors; OptionalTensors and SymInts ("" where a slot holds no name)
  int64_t integer = 0;             ///< Int, Bool, ScalarType, MemoryFormat, Layout; SymInt's literal
  std::vector<int64_t> integers;   ///< Ints, Bools; SymInts' literals where `names` is ""
  double real = 0;                 ///< Float
  std::vector<double> reals;       ///< Floats
  std::string device;              ///< Device: "cpu", "cuda:0", ...
  std::string unsupported;         ///< Unsupported: the schema's key (as_graph, as_custom_obj, ...)
};

/// A node's input: the operator schema's argument name and its value.
struct NamedArgument {
  std::string name;
  Argument arg;
};

/// One call_function node.
struct Node {
  std::string target;  ///< "torch.ops.aten.linear.default", "_operator.getitem", ...
  std::string name;    ///< the node's own name (for messages)
  std::vector<NamedArgument> inputs;
  std::vector<Argument> outputs;
};

/// One dimension of a tensor's recorded shape: a number, or a symbol's expression ("s0").
struct SymSize {
  std::optional<int64_t> value;
  std::string expression;
};

/// What the program records of a tensor value.
struct TensorMeta {
  int dtype = 0;  ///< schema.py's ScalarType numbering (not c10's)
  std::vector<SymSize> sizes;
  std::vector<SymSize> strides;
  SymSize storage_offset{0, {}};
  bool requires_grad = false;
};

/// Where a graph input comes from (schema.py's InputSpec).
struct InputSpec {
  enum class Kind { User, Parameter, Buffer, TensorConstant, ConstantInput, Token, CustomObject };
  Kind kind = Kind::User;
  std::string arg;     ///< the graph input's name
  std::string target;  ///< the parameter's, buffer's or constant's state_dict name
  bool persistent = true;
};

/// Where a graph output goes (schema.py's OutputSpec).
struct OutputSpec {
  enum class Kind { User, BufferMutation, UserInputMutation, ParameterMutation, Loss, Gradient, Token };
  Kind kind = Kind::User;
  Argument arg;
  std::string target;  ///< the mutated buffer's or parameter's name, or the user input's
};

/// A dynamic dimension's allowed range (inclusive); nullopt: unbounded.
struct RangeConstraint {
  std::optional<int64_t> min, max;
};

/// The whole program.
struct Program {
  int schema_major = 0, schema_minor = 0;
  std::string torch_version;
  std::vector<Argument> inputs, outputs;
  std::vector<Node> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  std::vector<InputSpec> input_specs;
  std::vector<OutputSpec> output_specs;
  std::map<std::string, RangeConstraint> range_constraints;
  std::vector<std::string> forward_arg_names;  ///< the exported forward's parameter names
  std::vector<std::string> verifiers;          ///< the dialect: "TRAINING" (export()'s IR) or "ATEN" (core ATen)
};

/// A stored tensor of the archive (models/model_weights_config.json and the constants' config).
struct StoredTensor {
  std::string path;  ///< the member under data/weights/ (or data/constants/)
  bool is_param = false;
  TensorMeta meta;
};

/// The schema major version Locus reads.
inline constexpr int kSchemaMajor = 8;

/// Parses model.json's text; a malformed program is an IOError "<where>: <problem>" (`where`
/// names the file and member).
Program parse_program(const std::string& json, const std::string& where);

/// Parses a weights or constants config: state_dict name -> stored tensor, in the file's order;
/// IOError "<where>: <problem>" when malformed.
std::vector<std::pair<std::string, StoredTensor>> parse_tensor_config(const std::string& json, const std::string& where);

}  // namespace locus::exported
