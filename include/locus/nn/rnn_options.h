#pragma once
/// \file rnn_options.h
/// The options of the recurrent layers and cells, as LibTorch's torch/nn/options/rnn.h:
/// `nn::LSTMOptions(10, 20).num_layers(2).bidirectional(true)`,
/// `nn::RNNCellOptions(10, 20).nonlinearity(nn::kReLU)`.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <string>

#include "locus/arg.h"
#include "locus/nn/transformer_layer.h"

namespace locus::nn {

/// The nonlinearity of nn::RNN and nn::RNNCell: tanh or ReLU. Converts from `nn::kTanh` and
/// `nn::kReLU` (LibTorch's torch::kTanh, torch::kReLU) and from PyTorch's strings "tanh" and
/// "relu"; ValueError for another string or for kGELU.
struct RNNNonlinearity {
  /// Which one.
  enum Kind { Tanh, ReLU };
  /// kTanh or the RNN's own ReLU.
  RNNNonlinearity(Kind which) : kind(which) {}  // NOLINT: implicit, as LibTorch's variant
  /// `nn::kReLU`, the constant the transformer layers share; kGELU is a ValueError.
  RNNNonlinearity(TransformerActivation::Kind which);  // NOLINT: implicit, as LibTorch's variant
  /// "tanh" or "relu", PyTorch's Python spelling.
  RNNNonlinearity(const char* name);  // NOLINT: implicit, as PyTorch's string argument
  /// "tanh" or "relu".
  RNNNonlinearity(const std::string& name) : RNNNonlinearity(name.c_str()) {}  // NOLINT
  /// PyTorch's name of it: "tanh" or "relu".
  const char* name() const noexcept { return kind == Tanh ? "tanh" : "relu"; }
  /// Which one.
  Kind kind;
};

/// LibTorch's torch::kTanh as an RNN nonlinearity (nn::kReLU is the transformer layers'
/// constant, which converts too).
inline constexpr RNNNonlinearity::Kind kTanh = RNNNonlinearity::Tanh;

namespace detail {

/// Which recurrence a layer runs (LibTorch's kLSTM, kGRU, kRNN_TANH, kRNN_RELU).
enum class RNNMode { LSTM, GRU, RNN_TANH, RNN_RELU };

/// The options every recurrent layer has, which RNNImplBase reads (LibTorch's RNNOptionsBase):
/// each layer's own options convert to it.
struct RNNOptionsBase {
  /// A layer of `mode` from input_size features to hidden_size.
  RNNOptionsBase(RNNMode mode, int64_t input_size, int64_t hidden_size)
      : mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {}
  /// The recurrence.
  LOCUS_ARG(RNNMode, mode);
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of the hidden state h (and LSTM's cell state c).
  LOCUS_ARG(int64_t, hidden_size);
  /// Stacked layers, each reading the one below's output.
  LOCUS_ARG(int64_t, num_layers) = 1;
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias) = true;
  /// Input and output [N, L, features] instead of [L, N, features] (not the hidden states).
  LOCUS_ARG(bool, batch_first) = false;
  /// Dropout on the output of every layer but the last, in training mode.
  LOCUS_ARG(double, dropout) = 0.0;
  /// A second pass over the sequence backwards, its output beside the first's.
  LOCUS_ARG(bool, bidirectional) = false;
  /// LSTM only: h projected to this many features by weight_hr (0: no projection).
  LOCUS_ARG(int64_t, proj_size) = 0;
};

/// What every cell has, which RNNCellImplBase reads (LibTorch's RNNCellOptionsBase): sizes,
/// biases and how many gates the weights stack (1 for RNNCell, 4 for LSTMCell, 3 for GRUCell).
struct RNNCellOptionsBase {
  /// A cell from input_size to hidden_size features with num_chunks gates.
  RNNCellOptionsBase(int64_t input_size, int64_t hidden_size, bool bias, int64_t num_chunks)
      : input_size_(input_size), hidden_size_(hidden_size), bias_(bias), num_chunks_(num_chunks) {}
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of the state.
  LOCUS_ARG(int64_t, hidden_size);
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias);
  /// Gates stacked in the weights.
  LOCUS_ARG(int64_t, num_chunks);
};

}  // namespace detail

/// Options of nn::RNN: `RNNOptions(10, 20).num_layers(2).nonlinearity(nn::kReLU)`.
struct RNNOptions {
  /// From input_size features to hidden_size.
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of the hidden state h.
  LOCUS_ARG(int64_t, hidden_size);
  /// Stacked layers.
  LOCUS_ARG(int64_t, num_layers) = 1;
  /// h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh): tanh or ReLU.
  LOCUS_ARG(RNNNonlinearity, nonlinearity) = kTanh;
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias) = true;
  /// Input and output [N, L, features] (not the hidden state).
  LOCUS_ARG(bool, batch_first) = false;
  /// Dropout on the output of every layer but the last, in training mode.
  LOCUS_ARG(double, dropout) = 0.0;
  /// A second, backward pass whose output is concatenated to the forward one's.
  LOCUS_ARG(bool, bidirectional) = false;
};

/// Options of nn::LSTM: `LSTMOptions(10, 20).num_layers(2).proj_size(8)`.
struct LSTMOptions {
  /// From input_size features to hidden_size.
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of the cell state c (and of h without a projection).
  LOCUS_ARG(int64_t, hidden_size);
  /// Stacked layers.
  LOCUS_ARG(int64_t, num_layers) = 1;
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias) = true;
  /// Input and output [N, L, features] (not the states).
  LOCUS_ARG(bool, batch_first) = false;
  /// Dropout on the output of every layer but the last, in training mode.
  LOCUS_ARG(double, dropout) = 0.0;
  /// A second, backward pass whose output is concatenated to the forward one's.
  LOCUS_ARG(bool, bidirectional) = false;
  /// h projected to proj_size features by weight_hr_l{k} (0: none; below hidden_size).
  LOCUS_ARG(int64_t, proj_size) = 0;
};

/// Options of nn::GRU: `GRUOptions(10, 20).batch_first(true)`.
struct GRUOptions {
  /// From input_size features to hidden_size.
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of the hidden state h.
  LOCUS_ARG(int64_t, hidden_size);
  /// Stacked layers.
  LOCUS_ARG(int64_t, num_layers) = 1;
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias) = true;
  /// Input and output [N, L, features] (not the hidden state).
  LOCUS_ARG(bool, batch_first) = false;
  /// Dropout on the output of every layer but the last, in training mode.
  LOCUS_ARG(double, dropout) = 0.0;
  /// A second, backward pass whose output is concatenated to the forward one's.
  LOCUS_ARG(bool, bidirectional) = false;
};

/// Options of nn::RNNCell: `RNNCellOptions(10, 20).bias(false).nonlinearity(nn::kReLU)`.
struct RNNCellOptions {
  /// From input_size features to hidden_size.
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of the hidden state h.
  LOCUS_ARG(int64_t, hidden_size);
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias) = true;
  /// tanh or ReLU.
  LOCUS_ARG(RNNNonlinearity, nonlinearity) = kTanh;
};

/// Options of nn::LSTMCell: `LSTMCellOptions(10, 20)`.
struct LSTMCellOptions {
  /// From input_size features to hidden_size.
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of h and c.
  LOCUS_ARG(int64_t, hidden_size);
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias) = true;
};

/// Options of nn::GRUCell: `GRUCellOptions(10, 20)`.
struct GRUCellOptions {
  /// From input_size features to hidden_size.
  GRUCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  /// Features of the input x.
  LOCUS_ARG(int64_t, input_size);
  /// Features of h.
  LOCUS_ARG(int64_t, hidden_size);
  /// Biases b_ih and b_hh.
  LOCUS_ARG(bool, bias) = true;
};

}  // namespace locus::nn

LOCUS_API_END
