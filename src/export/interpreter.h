#pragma once
// Running an exported program's graph over Locus's ops (interpreter.cpp): each node's target is
// looked up in the table of supported targets (aten_targets.cpp), its named arguments resolved
// against the values computed so far, and its outputs bound to their names. Autograd records the
// ops as any Locus code, so training through the graph is Locus's backward.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "locus/device.h"
#include "locus/scalar.h"
#include "locus/tensor.h"
#include "src/export/program.h"

namespace locus::exported {

/// What a name of the graph holds: nothing, a tensor, a list of tensors, an integer (a
/// symbolic size's value), a float or a bool.
using Value = std::variant<std::monostate, Tensor, std::vector<Tensor>, int64_t, double, bool>;

/// What the module decides at run time, which the graph recorded at export.
struct RunContext {
  bool training = false;  ///< the module's mode: dropout and batch statistics follow it
  Device device = Device(DeviceType::CPU);  ///< where factory ops create their tensors (the parameters' device)
  /// Graph inputs that are buffers (their graph names): in-place updates of their counters
  /// (num_batches_tracked) follow the module's mode, as BatchNorm's do.
  const std::map<std::string, std::string>* buffer_of_input = nullptr;
};

/// One node's arguments, resolved against the values so far; the readers supply PyTorch's
/// default for an argument the file left out (Note [Exported programs]).
class Call {
 public:
  /// `read`: the names some node or the program's outputs read, each with its last reader (null:
  /// take every output as read).
  Call(const Node& node, const std::map<std::string, Value>& values, const RunContext& context,
       const std::map<std::string, size_t>* read = nullptr);

  const Node& node() const { return node_; }
  /// Whether anything reads output `k` of this node: the native norms' saved statistics, an
  /// extra pass over the input, are computed only when a node or the program's outputs use them.
  bool output_read(size_t k) const;
  const RunContext& context() const { return context_; }
  /// Whether argument `name` is given and not None.
  bool has(const char* name) const;
  Tensor tensor(const char* name) const;
  /// Undefined when absent or None.
  Tensor optional_tensor(const char* name) const;
  std::vector<Tensor> tensors(const char* name) const;
  int64_t integer(const char* name, std::optional<int64_t> fallback = std::nullopt) const;
  std::optional<int64_t> optional_integer(const char* name) const;
  std::vector<int64_t> integers(const char* name, std::optional<std::vector<int64_t>> fallback = std::nullopt) const;
  double real(const char* name, std::optional<double> fallback = std::nullopt) const;
  std::optional<double> optional_real(const char* name) const;
  bool boolean(const char* name, std::optional<bool> fallback = std::nullopt) const;
  /// An int, float or bool argument as a Scalar.
  Scalar scalar(const char* name) const;
  /// Whether argument `name` is a tensor (add.Tensor's `other` may be a number instead).
  bool is_tensor(const char* name) const;
  std::optional<DType> dtype(const char* name) const;
  std::string text(const char* name, const std::string& fallback) const;
  /// The graph name of tensor argument `name` (empty when it is not a tensor).
  std::string tensor_name(const char* name) const;
  /// Throws NotImplementedError "node '<name>' (<target>): <problem>".
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  const NamedArgument* find(const char* name) const;
  Value resolve(const Argument& a, const char* name) const;

  const Node& node_;
  const std::map<std::string, Value>& values_;
  const RunContext& context_;
  const std::map<std::string, size_t>* read_;
};

/// A supported target: its outputs, one Value per output the node declares (a list output is
/// one Value holding the tensors).
using Target = std::function<std::vector<Value>(const Call&)>;

/// The target's implementation, or null when Locus does not support it.
const Target* find_target(const std::string& target);

/// The dtype of schema.py's ScalarType number, or nullopt where Locus has none.
std::optional<DType> dtype_of_scalar_type(int code);

/// Runs `program`'s nodes with the graph inputs bound in `values` and returns the values of
/// `program.outputs`. A target outside the table is a NotImplementedError naming it and the node.
std::vector<Value> run_graph(const Program& program, std::map<std::string, Value> values, const RunContext& context);

/// The targets of `program` Locus cannot run, each once, in the order they first appear.
std::vector<std::string> unsupported_targets(const Program& program);

}  // namespace locus::exported
