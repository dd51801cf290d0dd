#pragma once
// What the recurrent cells and layers share beside the LSTM and GRU steps' front ends
// (src/ops/recurrent.h): the Elman step and the layers' check of their operands.

#include <initializer_list>
#include <string>
#include <utility>

#include "locus/tensor.h"

namespace locus::nn::detail {

/// An Elman step: tanh(pre) or relu(pre), pre = x W_ih^T + b_ih + h W_hh^T + b_hh.
Tensor rnn_step(const Tensor& pre, bool relu);

/// The layer's own check of its operands before any op runs, so that a mismatch names the layer
/// and the argument (PyTorch: "mat1 and mat2 must have the same dtype"): each defined operand
/// must be on the parameters' device (DeviceMismatchError naming `layer` and the operand) and of
/// their dtype (DTypeError saying which to convert).
void check_operands(const std::string& layer, const Tensor& weight,
                    std::initializer_list<std::pair<const char*, const Tensor*>> operands);

}  // namespace locus::nn::detail
