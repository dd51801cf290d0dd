#pragma once
// The recurrent steps' front ends (Note [One recipe] in src/ops/structured_call.h): the
// pointwise half of one LSTM or GRU step, after its products, which nn::LSTM, GRU and their
// cells call once per step. Gate order and formulas are PyTorch's: LSTM i, f, g, o; GRU r, z, n.

#include <tuple>

#include "locus/tensor.h"

namespace locus::ops {

/// An LSTM step from the summed gates [B, 4H] (both products and both biases) and c [B, H]:
/// {h', c'} with c' = sigmoid(f) c + sigmoid(i) tanh(g) and h' = sigmoid(o) tanh(c') (before any
/// projection). One kernel each way where the device has KernelTable::rnn_cell (Note [Fused
/// recurrent cells]), else composed of elementwise ops.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& gates, const Tensor& cx);

/// A GRU step from the input's projection gi [B, 3H] (with b_ih), the hidden state's gh [B, 3H]
/// (with b_hh) and h [B, H]: r, z = sigmoid(gi + gh), n = tanh(gi_n + r gh_n), h' = (h - n) z + n
/// (PyTorch's order of operations), fused or composed as lstm_cell.
Tensor gru_cell(const Tensor& gi, const Tensor& gh, const Tensor& hx);

}  // namespace locus::ops
