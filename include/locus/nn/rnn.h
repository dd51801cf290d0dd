#pragma once
/// \file rnn.h
/// nn::RNN, nn::LSTM and nn::GRU as LibTorch's (torch/nn/modules/rnn.h), with PyTorch's
/// state_dict names and order (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0,
/// then the same with _reverse for the backward direction, layer by layer), its gate order
/// (LSTM: i, f, g, o; GRU: r, z, n) and its initialisation (uniform in +-1/sqrt(hidden_size)),
/// so that a state_dict saved by PyTorch loads as it is. The cells are in rnn_cell.h.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "locus/nn/cloneable.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/rnn_options.h"
#include "locus/nn/utils/rnn.h"

namespace locus::nn {
namespace detail {

/// What RNN, LSTM and GRU share (LibTorch's RNNImplBase): the parameters, their registration,
/// initialisation and printed form, and the checks of the input and the states. Members are
/// compiled once in src/nn/rnn.cpp (extern template below).
template <class Derived>
class RNNImplBase : public Cloneable<Derived> {
 public:
  /// Checks the options (ValueError as PyTorch's: dropout outside [0, 1], proj_size negative or
  /// not below hidden_size, proj_size on another layer than LSTM, sizes not positive) and
  /// registers the parameters.
  explicit RNNImplBase(const RNNOptionsBase& options_base);
  /// Registers every layer's parameters in PyTorch's order and initialises them.
  void reset() override;
  /// PyTorch's initialisation: every parameter uniform in +-1/sqrt(hidden_size).
  void reset_parameters();
  /// LibTorch's flatten_parameters: re-reads the registered parameters into the list forward
  /// uses. Parameters keep their identity when the module moves (Module::to), so nothing else
  /// needs it; it stays for LibTorch programs that call it.
  void flatten_parameters();
  /// Every parameter in state_dict order, as LibTorch's all_weights().
  std::vector<Tensor> all_weights() const;
  /// PyTorch's extra_repr: "10, 20, num_layers=2, batch_first=True, bidirectional=True".
  std::string extra_repr() const override;
  /// The options every recurrent layer has (LibTorch's options_base).
  RNNOptionsBase options_base;

 protected:
  /// ShapeError unless `input` has `expected_dim` dims (2 when packed, else 3) and
  /// input_size features, with PyTorch's messages.
  void check_input(const Tensor& input, int64_t expected_dim) const;
  /// PyTorch's expected hidden state size: {layers * directions, batch, proj_size or hidden_size}.
  Shape expected_hidden_size(int64_t batch) const;
  /// ShapeError "Expected hidden size (2, 3, 20), got [1, 3, 20]" (`what` names the state).
  void check_hidden_size(const Tensor& hx, const Shape& expected, const char* what) const;
  /// Runs the layers over time-major rows: `input` [T * B, features] as T steps of B rows, or
  /// packed rows with `batch_sizes` (not empty). hx0 [layers * D, B, H] (and cx0 for LSTM) must
  /// be defined. Returns {output [rows, D * H_out], h_n, c_n (LSTM only)}.
  std::tuple<Tensor, Tensor, Tensor> run_layers(const Tensor& input, const std::vector<int64_t>& batch_sizes,
                                                const Tensor& hx0, const Tensor& cx0) const;
  /// RNN's and GRU's forward: PyTorch's checks of a 2-D or 3-D input and its hx, zeros for an
  /// undefined hx, {output, h_n} in the input's layout.
  std::tuple<Tensor, Tensor> forward_one_state(const Tensor& input, Tensor hx) const;
  /// RNN's and GRU's forward_with_packed_input.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_one_state_packed(const utils::rnn::PackedSequence& input,
                                                                          Tensor hx) const;
  /// The parameters' names in state_dict order.
  std::vector<std::string> flat_weights_names_;
  /// The names of each layer and direction's parameters (LibTorch's all_weights_).
  std::vector<std::vector<std::string>> all_weights_;
  /// The parameters in state_dict order, which forward reads.
  std::vector<Tensor> flat_weights_;
};

}  // namespace detail

/// A multi-layer Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or ReLU).
/// Input [L, N, input_size] ([N, L, input_size] with batch_first, or unbatched [L, input_size]),
/// h0 [layers * directions, N, hidden_size] (zeros when undefined; [layers * directions,
/// hidden_size] unbatched). Returns {output [L, N, directions * hidden_size] in the input's
/// layout, h_n in h0's}.
class RNNImpl : public detail::RNNImplBase<RNNImpl> {
 public:
  /// `nn::RNN(10, 20)`.
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  /// A layer with `options`.
  explicit RNNImpl(const RNNOptions& options);
  /// {output, h_n}. ShapeError for an input or hx of other sizes, with PyTorch's messages.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  /// The same over a PackedSequence: {packed output, h_n}, as LibTorch's.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                                                           Tensor hx = {});
  /// The options the layer was built with.
  RNNOptions options;
};
LOCUS_MODULE(RNN);

/// A multi-layer LSTM with PyTorch's gates: i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh),
/// c' = sigmoid(f) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c') (times W_hr^T with
/// proj_size). Input as RNN's; hx_opt is {h0, c0} ([layers * directions, N, proj_size or
/// hidden_size] and [layers * directions, N, hidden_size]), zeros when absent. Returns
/// {output, {h_n, c_n}}.
class LSTMImpl : public detail::RNNImplBase<LSTMImpl> {
 public:
  /// `nn::LSTM(10, 20)`.
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  /// A layer with `options`.
  explicit LSTMImpl(const LSTMOptions& options);
  /// {output, {h_n, c_n}}. ShapeError for an input or states of other sizes.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  /// The same over a PackedSequence: {packed output, {h_n, c_n}}, as LibTorch's.
  std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> forward_with_packed_input(
      const utils::rnn::PackedSequence& packed_input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  /// The options the layer was built with.
  LSTMOptions options;
};
LOCUS_MODULE(LSTM);

/// A multi-layer GRU with PyTorch's gates: r, z = sigmoid(x W_i{r,z}^T + b_i{r,z} + h W_h{r,z}^T
/// + b_h{r,z}), n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)), h' = (1 - z) n + z h. Input,
/// h0 and outputs as RNN's.
class GRUImpl : public detail::RNNImplBase<GRUImpl> {
 public:
  /// `nn::GRU(10, 20)`.
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  /// A layer with `options`.
  explicit GRUImpl(const GRUOptions& options);
  /// {output, h_n}. ShapeError for an input or hx of other sizes.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
  /// The same over a PackedSequence: {packed output, h_n}, as LibTorch's.
  std::tuple<utils::rnn::PackedSequence, Tensor> forward_with_packed_input(const utils::rnn::PackedSequence& packed_input,
                                                                           Tensor hx = {});
  /// The options the layer was built with.
  GRUOptions options;
};
LOCUS_MODULE(GRU);

namespace detail {
extern template class RNNImplBase<RNNImpl>;
extern template class RNNImplBase<LSTMImpl>;
extern template class RNNImplBase<GRUImpl>;
}  // namespace detail

}  // namespace locus::nn

LOCUS_API_END
