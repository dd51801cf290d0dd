#pragma once
/// \file rnn_cell.h
/// nn::RNNCell, nn::LSTMCell and nn::GRUCell as LibTorch's: one time step of the recurrent
/// layers (rnn.h), with PyTorch's state_dict names weight_ih, weight_hh, bias_ih, bias_hh, its
/// gate order and its initialisation.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "locus/nn/cloneable.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/rnn_options.h"

namespace locus::nn {
namespace detail {

/// What the three cells share (LibTorch's RNNCellImplBase): weight_ih [chunks * hidden,
/// input_size], weight_hh [chunks * hidden, hidden], bias_ih and bias_hh [chunks * hidden], their
/// initialisation (uniform in +-1/sqrt(hidden_size)), printed form and input checks. Members are
/// compiled once in src/nn/rnn_cell.cpp.
template <class Derived>
class RNNCellImplBase : public Cloneable<Derived> {
 public:
  /// A cell with these sizes; ValueError for a negative input_size or a hidden_size below 1.
  explicit RNNCellImplBase(const RNNCellOptionsBase& options_base);
  /// Registers weight_ih, weight_hh (and bias_ih, bias_hh) and initialises them.
  void reset() override;
  /// PyTorch's initialisation: every parameter uniform in +-1/sqrt(hidden_size).
  void reset_parameters();
  /// PyTorch's extra_repr: "10, 20, bias=False, nonlinearity=relu".
  std::string extra_repr() const override;
  /// [num_chunks * hidden_size, input_size].
  Tensor weight_ih;
  /// [num_chunks * hidden_size, hidden_size].
  Tensor weight_hh;
  /// [num_chunks * hidden_size] (undefined without bias).
  Tensor bias_ih;
  /// [num_chunks * hidden_size] (undefined without bias).
  Tensor bias_hh;
  /// The sizes every cell has (LibTorch's options_base).
  RNNCellOptionsBase options_base;

 protected:
  /// ShapeError unless input is 1-D or 2-D with input_size features; returns whether batched.
  bool check_forward_input(const Tensor& input) const;
  /// ShapeError unless `hx` is [batch, hidden_size] for a [batch, input_size] input (the input
  /// and hx already batched); `label` names it in the message ("hidden0", "hidden1").
  void check_forward_hidden(const Tensor& input, const Tensor& hx, const char* label) const;
  /// The nonlinearity printed by extra_repr (RNNCell's), empty for the others.
  virtual std::string nonlinearity_str() const { return {}; }
};

}  // namespace detail

/// One step of an Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or ReLU).
/// input [N, input_size] or unbatched [input_size]; hx [N, hidden_size] (zeros when undefined).
class RNNCellImpl : public detail::RNNCellImplBase<RNNCellImpl> {
 public:
  /// `nn::RNNCell(10, 20)`.
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  /// A cell with `options`.
  explicit RNNCellImpl(const RNNCellOptions& options);
  /// h'. ShapeError for an input or hx of other sizes.
  Tensor forward(const Tensor& input, Tensor hx = {});
  /// The options the cell was built with.
  RNNCellOptions options;

 protected:
  std::string nonlinearity_str() const override;
};
LOCUS_MODULE(RNNCell);

/// One LSTM step with PyTorch's gates i, f, g, o: returns {h', c'}. input [N, input_size] or
/// unbatched [input_size]; hx_opt {h, c}, each [N, hidden_size] (zeros when absent).
class LSTMCellImpl : public detail::RNNCellImplBase<LSTMCellImpl> {
 public:
  /// `nn::LSTMCell(10, 20)`.
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  /// A cell with `options`.
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  /// {h', c'}. ShapeError for an input or states of other sizes.
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
  /// The options the cell was built with.
  LSTMCellOptions options;
};
LOCUS_MODULE(LSTMCell);

/// One GRU step with PyTorch's gates r, z, n: h' = (1 - z) n + z h. input and hx as RNNCell's.
class GRUCellImpl : public detail::RNNCellImplBase<GRUCellImpl> {
 public:
  /// `nn::GRUCell(10, 20)`.
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  /// A cell with `options`.
  explicit GRUCellImpl(const GRUCellOptions& options);
  /// h'. ShapeError for an input or hx of other sizes.
  Tensor forward(const Tensor& input, Tensor hx = {});
  /// The options the cell was built with.
  GRUCellOptions options;
};
LOCUS_MODULE(GRUCell);

namespace detail {
extern template class RNNCellImplBase<RNNCellImpl>;
extern template class RNNCellImplBase<LSTMCellImpl>;
extern template class RNNCellImplBase<GRUCellImpl>;
}  // namespace detail

}  // namespace locus::nn

LOCUS_API_END
