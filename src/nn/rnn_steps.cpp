// The recurrences' time steps (rnn_steps.h).

#include "src/nn/rnn_steps.h"

#include "locus/elementwise.h"
#include "locus/errors.h"
#include "locus/ops.h"

namespace locus::nn::detail {

Tensor rnn_step(const Tensor& pre, bool relu) { return relu ? locus::relu(pre) : locus::tanh(pre); }

void check_operands(const std::string& layer, const Tensor& weight,
                    std::initializer_list<std::pair<const char*, const Tensor*>> operands) {
  for (const auto& [name, t] : operands) {
    if (!t->defined()) continue;
    if (t->device() != weight.device()) throw DeviceMismatchError(weight.device(), t->device(), name, layer);
    if (t->dtype() != weight.dtype())
      throw DTypeError(layer + ": " + name + " is " + std::string(dtype_name(t->dtype())) + " but the parameters are " +
                       std::string(dtype_name(weight.dtype())) + "; convert " + name + " with .to(" +
                       std::string(dtype_name(weight.dtype())) + ") or the module with ->to(" +
                       std::string(dtype_name(t->dtype())) + ")");
  }
}

}  // namespace locus::nn::detail
