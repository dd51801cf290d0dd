// Custom autograd Functions (include/locus/autograd/function.h): the node of one call and the
// AutogradContext it keeps. The saved tensors go through the same SavedTensor records as the
// built-in nodes' (Note [Saved tensors]), so versions are checked, create_graph attaches them,
// and a backward without retain_graph frees them.

#include <cxxabi.h>

#include <cstdlib>
#include <optional>

#include "locus/autograd/function.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "src/autograd/node.h"

namespace locus::autograd {

class CustomFunctionNode final : public Node {
 public:
  CustomFunctionNode(std::string name, function_impl::CustomBackward backward, std::vector<bool> is_tensor, uint32_t outputs)
      : Node(outputs), name_(std::move(name)), backward_(std::move(backward)), is_tensor_(std::move(is_tensor)) {}

  std::string name() const override { return name_; }

  variable_list apply(variable_list&& grads) override {
    if (released_)
      throw ValueError("[locus::backward] trying to backward through the graph a second time: " + name_ +
                       "'s saved tensors were freed by the first backward; pass retain_graph=true to run it twice");
    for (const std::optional<SavedTensor>& s : saved_)
      if (s.has_value()) s->check_version(*this);
    grads.resize(num_inputs());
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined() && ctx_.materialize_grads_)
        grads[i] = zeros(output_shapes_[i], output_options_[i]);
    variable_list result;
    {
      std::optional<InputsAttached> attached;
      if (is_grad_enabled()) attached.emplace(attachable_, shared_from_this());
      result = backward_(&ctx_, std::move(grads));
    }
    return gradients_of_inputs(std::move(result));
  }

  void release_variables() override {
    saved_.clear();
    attachable_.clear();
    ctx_.saved_data.clear();
    released_ = true;
  }

  AutogradContext& context() noexcept { return ctx_; }

  // The outputs' history, and the saved tensors (after forward).
  variable_list finish(variable_list outputs) {
    const variable_list inputs = std::move(inputs_);
    bool executable = is_grad_enabled();
    bool any_input = false;
    for (const Tensor& t : inputs) any_input = any_input || (t.defined() && t.requires_grad());
    executable = executable && any_input;
    if (executable) {
      for (const Tensor& t : inputs) add_next_edge(gradient_edge(t));
      set_num_inputs(static_cast<uint32_t>(outputs.size()));
      for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = link_output(outputs[i], static_cast<uint32_t>(i), inputs);
      for (const Tensor& t : ctx_.to_save_) {
        if (!t.defined()) {
          saved_.emplace_back(std::nullopt);
          continue;
        }
        bool is_output = false;
        for (const Tensor& o : outputs) is_output = is_output || o.impl() == t.impl();
        // The held handle is the node's own (detached); an output's edge is the node itself.
        const Tensor held = t.detach();
        saved_.emplace_back(SavedTensor(held, t, is_output));
        attachable_.push_back(saved_.back().value());
      }
    } else {
      // Nothing records: the tensors are kept as they are, for get_saved_variables.
      for (const Tensor& t : ctx_.to_save_)
        saved_.emplace_back(t.defined() ? std::optional<SavedTensor>(SavedTensor(t.detach(), t, false)) : std::nullopt);
    }
    ctx_.to_save_.clear();
    return outputs;
  }

  variable_list saved_variables() const {
    if (released_)
      throw ValueError("[locus::get_saved_variables] the saved tensors of " + name_ +
                       " were freed by a backward; pass retain_graph=true to the first backward to keep them");
    variable_list out;
    for (const auto& s : saved_) out.push_back(s.has_value() ? s->tensor() : Tensor());
    return out;
  }

  // The tensor arguments, held from before forward until finish().
  void set_inputs(variable_list inputs) {
    ctx_.node_ = this;
    inputs_ = std::move(inputs);
    size_t k = 0;
    for (const bool tensor : is_tensor_) {
      if (!tensor) {
        ctx_.needs_input_grad_.push_back(false);
        continue;
      }
      const Tensor& t = inputs_[k++];
      ctx_.needs_input_grad_.push_back(is_grad_enabled() && t.defined() && t.requires_grad());
    }
  }

 private:
  // One output's history: a non-differentiable output stays without; an input returned as it
  // is comes back as a new handle; a dirty input takes the node as its history.
  Tensor link_output(const Tensor& output, uint32_t nr, const variable_list& inputs) {
    output_shapes_.push_back(output.defined() ? output.shape() : Shape{});
    output_options_.push_back(output.defined() ? TensorOptions().dtype(output.dtype()).device(output.device()) : TensorOptions());
    if (!output.defined() || ctx_.non_differentiable_.count(output.impl()) || !is_floating_point(output.dtype())) return output;
    bool is_input = false;
    for (const Tensor& t : inputs) is_input = is_input || (t.defined() && t.impl() == output.impl());
    Tensor linked = output;
    if (is_input && ctx_.dirty_.count(output.impl())) {
      if (output.requires_grad() && output.is_leaf())
        throw ValueError("[locus::" + name_ + "] a leaf Variable that requires grad has been used in an in-place operation "
                         "(mark_dirty on a leaf)");
    } else if (is_input) {
      linked = output.detach();  // a new handle: the input keeps its own history
    }
    linked.impl()->set_grad_fn(shared_from_this(), nr);
    linked.impl()->set_requires_grad(true);
    return linked;
  }

  // One gradient per tensor input, from backward's one per forward argument.
  variable_list gradients_of_inputs(variable_list result) const {
    const size_t expected = is_tensor_.size();
    while (result.size() > expected && !result.back().defined()) result.pop_back();
    if (result.size() != expected)
      throw ValueError("[locus::" + name_ + "] function backward returned an incorrect number of gradients (expected " +
                       std::to_string(expected) + ", got " + std::to_string(result.size()) + ")");
    variable_list grads;
    for (size_t j = 0; j < expected; ++j) {
      if (is_tensor_[j]) {
        grads.push_back(result[j]);
      } else if (result[j].defined()) {
        throw ValueError("[locus::" + name_ + "] function backward returned a gradient different than an undefined tensor at "
                         "position " + std::to_string(j + 1) + ", but the corresponding forward input was not a tensor");
      }
    }
    return grads;
  }

  std::string name_;
  function_impl::CustomBackward backward_;
  std::vector<bool> is_tensor_;
  AutogradContext ctx_;
  std::vector<std::optional<SavedTensor>> saved_;
  std::vector<SavedTensor> attachable_;
  std::vector<Shape> output_shapes_;
  std::vector<TensorOptions> output_options_;
  variable_list inputs_;
  bool released_ = false;
};

// ---- AutogradContext ------------------------------------------------------------------------

void AutogradContext::save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs)
    if (t.defined()) dirty_.insert(t.impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs)
    if (t.defined()) non_differentiable_.insert(t.impl());
}

variable_list AutogradContext::get_saved_variables() const {
  if (!node_) return to_save_;
  return node_->saved_variables();
}

bool AutogradContext::needs_input_grad(size_t index) const {
  return index < needs_input_grad_.size() && needs_input_grad_[index];
}

bool AutogradContext::needs_input_grad(std::initializer_list<IndexRange> ranges) const {
  for (const auto& [first, last] : ranges)
    for (size_t i = first; i < last; ++i)
      if (needs_input_grad(i)) return true;
  return false;
}

// ---- the non-template half of Function<T>::apply ---------------------------------------------

namespace function_impl {

namespace {

// "MulConstant" from typeid's mangled name, then PyTorch's suffix: MulConstantBackward.
std::string node_name(const char* mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  if (const size_t colon = name.rfind("::"); colon != std::string::npos) name = name.substr(colon + 2);
  return name + "Backward";
}

}  // namespace

std::shared_ptr<CustomFunctionNode> make_custom_node(const char* type_name, CustomBackward backward, variable_list inputs,
                                                     std::vector<bool> is_tensor) {
  auto node = std::make_shared<CustomFunctionNode>(node_name(type_name), std::move(backward), std::move(is_tensor), 1);
  node->set_inputs(std::move(inputs));
  return node;
}

AutogradContext* context_of(CustomFunctionNode& node) { return &node.context(); }

variable_list finish_custom_call(const std::shared_ptr<CustomFunctionNode>& node, variable_list outputs) {
  return node->finish(std::move(outputs));
}

}  // namespace function_impl

}  // namespace locus::autograd
