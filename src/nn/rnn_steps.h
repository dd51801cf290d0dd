#pragma once
// One time step of each recurrence, after its projections: what nn::RNNCell, LSTMCell and
// GRUCell compute and what the layers of nn::RNN, LSTM and GRU repeat (src/nn/rnn.cpp). Each is
// a composition of differentiable ops (the gates are cut apart by one split, one node), so
// autograd needs nothing else. Gate order and formulas are PyTorch's:
// LSTM i, f, g, o; GRU r, z, n.

#include <initializer_list>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "locus/tensor.h"

namespace locus::nn::detail {

/// An Elman step: tanh(pre) or relu(pre), pre = x W_ih^T + b_ih + h W_hh^T + b_hh.
Tensor rnn_step(const Tensor& pre, bool relu);

/// An LSTM step from the summed gates [B, 4H] (both projections and both biases) and c [B, H]:
/// {h' (before any projection), c'} with c' = sigmoid(f) c + sigmoid(i) tanh(g) and
/// h' = sigmoid(o) tanh(c').
std::tuple<Tensor, Tensor> lstm_step(const Tensor& gates, const Tensor& c);

/// A GRU step from the input's projection gi [B, 3H] (with b_ih), the hidden state's gh [B, 3H]
/// (with b_hh) and h [B, H]: r, z = sigmoid(gi + gh), n = tanh(gi_n + r gh_n), h' = (h - n) z + n
/// (PyTorch's order of operations).
Tensor gru_step(const Tensor& gi, const Tensor& gh, const Tensor& h);

/// The layer's own check of its operands before any op runs, so that a mismatch names the layer
/// and the argument (PyTorch: "mat1 and mat2 must have the same dtype"): each defined operand
/// must be on the parameters' device (DeviceMismatchError naming `layer` and the operand) and of
/// their dtype (DTypeError saying which to convert).
void check_operands(const std::string& layer, const Tensor& weight,
                    std::initializer_list<std::pair<const char*, const Tensor*>> operands);

}  // namespace locus::nn::detail
