#pragma once
// The recurrent steps' front ends (Note [One recipe] in src/ops/structured_call.h): the
// pointwise half of one LSTM or GRU step, after its products, which nn::LSTM, GRU and their
// cells call once per step. Gate order and formulas are PyTorch's: LSTM i, f, g, o; GRU r, z, n.

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

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

/// The cell of a recurrence.
enum class RecurrenceMode : uint8_t { RnnTanh, RnnRelu, Lstm, Gru };

/// What a whole multi-layer recurrence is (nn::RNNOptionsBase's numbers).
struct RecurrenceShape {
  RecurrenceMode mode = RecurrenceMode::Lstm;
  int64_t input_size = 0, hidden_size = 0, proj_size = 0, num_layers = 1;
  bool bidirectional = false, bias = true;
};

/// A whole recurrence without dropout between its layers in one call where the device has
/// KernelTable::rnn and takes it (cuDNN's on CUDA, Note [cuDNN RNNs]): {output rows
/// [rows, directions * out], h_n, c_n (LSTM)} with one node, CudnnRnnBackward0, which is not
/// differentiable twice (as PyTorch's). `rows` are time-major, step t's batch_sizes[t] after
/// step t - 1's; `hx` and `cx` [layers * directions, B, ...]; `weights` the layer's parameters
/// in PyTorch's order. nullopt where the caller composes the recurrence step by step (every
/// other device, autocast, a dtype or size the backend declines).
std::optional<std::tuple<Tensor, Tensor, Tensor>> fused_recurrence(const RecurrenceShape& shape, const Tensor& rows,
                                                                   const std::vector<int64_t>& batch_sizes,
                                                                   const Tensor& hx, const Tensor& cx,
                                                                   const std::vector<Tensor>& weights);

}  // namespace locus::ops
