// The recurrences' time steps (rnn_steps.h).

#include "src/nn/rnn_steps.h"

#include <vector>

#include "locus/elementwise.h"
#include "locus/errors.h"
#include "locus/ops.h"
#include "locus/shape_ops.h"

namespace locus::nn::detail {

Tensor rnn_step(const Tensor& pre, bool relu) { return relu ? locus::relu(pre) : locus::tanh(pre); }

std::tuple<Tensor, Tensor> lstm_step(const Tensor& gates, const Tensor& c) {
  const int64_t h = gates.size(1) / 4;
  const std::vector<Tensor> g = split(gates, {h, h, h, h}, 1);
  const Tensor in_gate = sigmoid(g[0]), forget_gate = sigmoid(g[1]), cell_gate = locus::tanh(g[2]),
               out_gate = sigmoid(g[3]);
  const Tensor c_next = forget_gate * c + in_gate * cell_gate;
  return {out_gate * locus::tanh(c_next), c_next};
}

Tensor gru_step(const Tensor& gi, const Tensor& gh, const Tensor& h) {
  const int64_t n = gi.size(1) / 3;
  const std::vector<Tensor> i = split(gi, {n, n, n}, 1), hh = split(gh, {n, n, n}, 1);
  const Tensor reset_gate = sigmoid(i[0] + hh[0]), update_gate = sigmoid(i[1] + hh[1]);
  const Tensor new_gate = locus::tanh(i[2] + reset_gate * hh[2]);
  return (h - new_gate) * update_gate + new_gate;
}

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
