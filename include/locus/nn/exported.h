#pragma once
/// \file exported.h
/// A model exported from PyTorch with torch.export (a `.pt2` file of `torch.export.save`) as a
/// Locus module: `auto m = locus::load_exported("model.pt2"); auto y = m->forward({x});`. Its
/// parameters and buffers carry the exported module's state_dict names (nested submodules for
/// dotted names, tied weights one parameter), so optimizers, state_dict, safetensors, `.to()`
/// and train()/eval() work on it as on any module, and training through it is Locus's autograd
/// over Locus's ops (docs/interop.md, "Models exported from PyTorch").

#include "locus/export.h"
LOCUS_API_BEGIN

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "locus/device.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/tensor.h"

namespace locus {
namespace exported {
struct Pt2Contents;
}  // namespace exported

namespace nn {

/// The module of an exported program (LibTorch has none; PyTorch's is
/// `torch.export.load(path).module()`).
class ExportedModuleImpl : public Module {
 public:
  /// The module of the program read from a .pt2 file, on `device` (cpu by default).
  ExportedModuleImpl(std::shared_ptr<const exported::Pt2Contents> contents, std::optional<Device> device);

  /// The program's outputs for its user inputs, in the exported forward's order. Shapes are
  /// checked against the program (a static size must match; a dynamic one binds and must lie
  /// in its range; a derived one, such as 2*b, must equal its expression), naming the input and
  /// dimension.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs);
  /// A program of one input and one output, as Sequential calls modules.
  Tensor forward(const Tensor& input) override;

  /// The exported forward's input names (`x`, `idx`, ...).
  std::vector<std::string> input_names() const;
  /// Every operator the program calls, once each, in the order they first appear.
  std::vector<std::string> operators() const;
  /// The program's operators Locus does not run (empty: every one is supported).
  std::vector<std::string> unsupported_operators() const;
  /// "ExportedModule(inputs=[x], operators=12, torch=2.15.0)".
  std::string extra_repr() const override;

 private:
  Tensor state_tensor(const std::string& dotted_name) const;
  enum class StateKind { Parameter, Buffer, Constant };
  void add_state(const std::string& dotted_name, const Tensor& value, StateKind kind, bool persistent = true);

  std::shared_ptr<const exported::Pt2Contents> contents_;
  std::map<std::string, std::string> buffer_of_input_;  // graph input -> buffer name
  bool convolutional_ = false;  // the graph has 2-d convolutions (Note [Channels-last programs])
};

/// The handle of ExportedModuleImpl.
LOCUS_MODULE(ExportedModule);

}  // namespace nn

/// What a `.pt2` file holds, read without running it (`locus info model.pt2`).
struct ExportedSummary {
  std::string torch_version;  ///< the PyTorch that saved it
  std::string schema;         ///< the serialization schema version, "8.20"
  std::string dialect;        ///< "TRAINING" (export()'s graph) or "ATEN" (core ATen)
  /// Each user input: its name and shape, dynamic dimensions as their symbol and range
  /// ("x: float32 [s77 in 1..64, 4]").
  std::vector<std::string> inputs;
  size_t outputs = 0;
  size_t parameters = 0, parameter_elements = 0, buffers = 0;
  /// Every operator the program calls, once each, with whether Locus runs it.
  std::vector<std::pair<std::string, bool>> operators;
};

/// Reads `path` (a torch.export.save file) and describes it; IOError as load_exported's for a
/// malformed file. Unlike load_exported it does not refuse operators Locus lacks: it lists them.
ExportedSummary summarize_exported(const std::string& path);

/// Loads the program of a `.pt2` file written by `torch.export.save` as a module on `device`
/// (cpu by default), in the mode it was exported in (train() or eval() to change it). IOError
/// naming the file, member and problem for a malformed file or another serialization schema
/// major version; NotImplementedError naming the operator and node for an operator Locus does
/// not run, and for control flow, custom objects and pickled payloads.
nn::ExportedModule load_exported(const std::string& path, std::optional<Device> device = std::nullopt);

}  // namespace locus

LOCUS_API_END
