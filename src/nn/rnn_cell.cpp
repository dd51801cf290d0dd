// nn::RNNCell, nn::LSTMCell and nn::GRUCell: PyTorch 1.13's RNNCellBase (parameters,
// initialisation, repr) and its cells' forwards (1-D or 2-D input, zero states, ATen's checks of
// the input and the states), each a projection of the input and of the state followed by the
// step (rnn_steps.h for the Elman cell, src/ops/recurrent.h for LSTM and GRU).

#include "locus/nn/rnn_cell.h"

#include <cmath>
#include <string>
#include <utility>

#include "locus/autograd.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/init.h"
#include "locus/nn_ops.h"
#include "src/nn/rnn_steps.h"
#include "src/ops/recurrent.h"

namespace locus::nn {
namespace detail {

template <class Derived>
RNNCellImplBase<Derived>::RNNCellImplBase(const RNNCellOptionsBase& o) : options_base(o) {
  if (o.input_size() < 0 || o.hidden_size() <= 0)
    throw ValueError(module_type_name(typeid(Derived)) +
                     ": input_size must not be negative and hidden_size must be positive, got " +
                     std::to_string(o.input_size()) + " and " + std::to_string(o.hidden_size()));
  reset();
}

template <class Derived>
void RNNCellImplBase<Derived>::reset() {
  const RNNCellOptionsBase& o = options_base;
  const int64_t gates = o.num_chunks() * o.hidden_size();
  weight_ih = this->register_parameter("weight_ih", empty({gates, o.input_size()}));
  weight_hh = this->register_parameter("weight_hh", empty({gates, o.hidden_size()}));
  if (o.bias()) {
    bias_ih = this->register_parameter("bias_ih", empty({gates}));
    bias_hh = this->register_parameter("bias_hh", empty({gates}));
  } else {
    bias_ih = Tensor(), bias_hh = Tensor();
  }
  reset_parameters();
}

template <class Derived>
void RNNCellImplBase<Derived>::reset_parameters() {
  NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor w : {weight_ih, weight_hh, bias_ih, bias_hh})
    if (w.defined()) init::uniform_(w, -bound, bound);
}

template <class Derived>
std::string RNNCellImplBase<Derived>::extra_repr() const {
  std::string s = std::to_string(options_base.input_size()) + ", " + std::to_string(options_base.hidden_size());
  if (!options_base.bias()) s += ", bias=False";
  const std::string nonlinearity = nonlinearity_str();
  if (!nonlinearity.empty() && nonlinearity != "tanh") s += ", nonlinearity=" + nonlinearity;
  return s;
}

template <class Derived>
bool RNNCellImplBase<Derived>::check_forward_input(const Tensor& input) const {
  const std::string name = module_type_name(typeid(Derived));
  if (!input.defined()) throw ValueError(name + ": input is an undefined tensor");
  if (input.dim() != 1 && input.dim() != 2)
    throw ShapeError(name + ": Expected input to be 1-D or 2-D but received " + std::to_string(input.dim()) +
                     "-D tensor");
  if (input.size(-1) != options_base.input_size())
    throw ShapeError(name + ": input has inconsistent input_size: got " + std::to_string(input.size(-1)) +
                     " expected " + std::to_string(options_base.input_size()));
  return input.dim() == 2;
}

template <class Derived>
void RNNCellImplBase<Derived>::check_forward_hidden(const Tensor& input, const Tensor& hx, const char* label) const {
  const std::string name = module_type_name(typeid(Derived));
  if (hx.dim() != 2)
    throw ShapeError(name + ": Expected " + label + " to be " + std::to_string(input.dim() == 2 ? 2 : 1) +
                     "-D like the input, got " + std::to_string(hx.dim() - (input.dim() == 2 ? 0 : 1)) + "-D");
  if (input.size(0) != hx.size(0))
    throw ShapeError(name + ": Input batch size " + std::to_string(input.size(0)) + " doesn't match " + label +
                     " batch size " + std::to_string(hx.size(0)));
  if (hx.size(1) != options_base.hidden_size())
    throw ShapeError(name + ": " + label + " has inconsistent hidden_size: got " + std::to_string(hx.size(1)) +
                     ", expected " + std::to_string(options_base.hidden_size()));
}

template class RNNCellImplBase<RNNCellImpl>;
template class RNNCellImplBase<LSTMCellImpl>;
template class RNNCellImplBase<GRUCellImpl>;

namespace {

// The cell's state as [batch, hidden]: zeros when absent, a row added for an unbatched input.
Tensor batched_state(const Tensor& state, const Tensor& input, int64_t hidden_size, bool batched) {
  if (!state.defined())
    return zeros({input.size(0), hidden_size}, TensorOptions().dtype(input.dtype()).device(input.device()));
  return batched ? state : state.unsqueeze(0);
}

}  // namespace
}  // namespace detail

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : RNNCellImplBase(detail::RNNCellOptionsBase(o.input_size(), o.hidden_size(), o.bias(), 1)), options(o) {}

std::string RNNCellImpl::nonlinearity_str() const { return options.nonlinearity().name(); }

Tensor RNNCellImpl::forward(const Tensor& input_in, Tensor hx) {
  const bool batched = check_forward_input(input_in);
  const Tensor input = batched ? input_in : input_in.unsqueeze(0);
  hx = detail::batched_state(hx, input, options.hidden_size(), batched);
  check_forward_hidden(input, hx, "hidden0");
  detail::check_operands("RNNCell", weight_ih, {{"input", &input}, {"hx", &hx}});
  const Tensor h = detail::rnn_step(linear(input, weight_ih, bias_ih) + linear(hx, weight_hh, bias_hh),
                                    options.nonlinearity().kind == RNNNonlinearity::ReLU);
  return batched ? h : h.squeeze(0);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : RNNCellImplBase(detail::RNNCellOptionsBase(o.input_size(), o.hidden_size(), o.bias(), 4)), options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input_in, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  const bool batched = check_forward_input(input_in);
  const Tensor input = batched ? input_in : input_in.unsqueeze(0);
  Tensor hx, cx;
  if (hx_opt) {
    std::tie(hx, cx) = *hx_opt;
    if (!hx.defined() || !cx.defined()) throw ValueError("LSTMCell: hx and cx must both be defined when given");
  }
  hx = detail::batched_state(hx, input, options.hidden_size(), batched);
  cx = detail::batched_state(cx, input, options.hidden_size(), batched);
  check_forward_hidden(input, hx, "hidden0");
  check_forward_hidden(input, cx, "hidden1");
  detail::check_operands("LSTMCell", weight_ih, {{"input", &input}, {"hx", &hx}, {"cx", &cx}});
  auto [h, c] = ops::lstm_cell(linear(input, weight_ih, bias_ih) + linear(hx, weight_hh, bias_hh), cx);
  if (!batched) return {h.squeeze(0), c.squeeze(0)};
  return {h, c};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : RNNCellImplBase(detail::RNNCellOptionsBase(o.input_size(), o.hidden_size(), o.bias(), 3)), options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input_in, Tensor hx) {
  const bool batched = check_forward_input(input_in);
  const Tensor input = batched ? input_in : input_in.unsqueeze(0);
  hx = detail::batched_state(hx, input, options.hidden_size(), batched);
  check_forward_hidden(input, hx, "hidden0");
  detail::check_operands("GRUCell", weight_ih, {{"input", &input}, {"hx", &hx}});
  const Tensor h = ops::gru_cell(linear(input, weight_ih, bias_ih), linear(hx, weight_hh, bias_hh), hx);
  return batched ? h : h.squeeze(0);
}

}  // namespace locus::nn
