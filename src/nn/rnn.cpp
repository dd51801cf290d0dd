// nn::RNN, nn::LSTM and nn::GRU: PyTorch 1.13's nn.RNNBase and its three forwards (input and
// state checks, unbatched and batch_first inputs, packed sequences, zero initial states), over a
// recurrence composed of differentiable ops (Note [Recurrent layers as compositions]).

#include "locus/nn/rnn.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "locus/autograd.h"
#include "locus/elementwise.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/init.h"
#include "locus/nn_ops.h"
#include "locus/ops.h"
#include "locus/products.h"
#include "locus/shape_ops.h"
#include "src/nn/python_repr.h"
#include "src/ops/recurrent.h"
#include "src/nn/rnn_steps.h"
#include "src/nn/train_mode_warning.h"

namespace locus::nn {
namespace detail {
namespace {

// Note [Recurrent layers as compositions]
// A layer runs in one direction as cuDNN and ATen's CPU path do: the input's projection for all
// time steps is one product, x W_ih^T + b, over the [rows, features] matrix of every step's
// rows, and each step then adds one product of the hidden state, h W_hh^T, and applies the
// step's pointwise gates (src/ops/recurrent.h: one fused kernel where the device has it). For RNN
// and LSTM both biases ride on the first product (b_ih + b_hh, one [G] add per layer) and the
// step's product is one addmm onto that step's rows; GRU keeps b_hh apart because r multiplies
// its n part. Everything is an ordinary op, so autograd records the whole unrolled recurrence
// and any device runs it.
//
// Padded input is the special case of packed input where every step runs the whole batch: the
// rows of step t are rows [t B, (t + 1) B) of the time-major input, so one loop serves both. With
// packed input the batch shrinks as sequences end: a forward pass sets aside the rows of the
// sequences that ended (their final state) and goes on with the first batch_sizes[t] rows; a
// backward pass starts from the last step with the few sequences that are that long and
// appends each sequence's initial state as the batch grows.

struct LayerParameters {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

struct DirectionResult {
  Tensor output, h, c;
};

// Note [Slicing the steps' rows]
// Each step reads its rows of the one input projection gi [rows, G], cut apart by one split.
// split records its pieces as one node whose backward is one cat, O(T B G), as PyTorch's
// SplitWithSizesBackward0; a narrow per piece would give each step a backward that fills a zero
// tensor of gi's whole size, O(T^2 B G), a tenth of the LSTM language model's training step
// (T = 35, G = 1024; bench row lstm_lm_train_step_b32). The gates of each step are cut apart
// the same way.

DirectionResult run_direction(RNNMode mode, const Tensor& x, const std::vector<int64_t>& batch_sizes, const Tensor& h0,
                              const Tensor& c0, const LayerParameters& p, bool reverse) {
  const bool lstm = mode == RNNMode::LSTM, gru = mode == RNNMode::GRU;
  Tensor bias = p.b_ih;
  if (bias.defined() && !gru) bias = p.b_ih + p.b_hh;
  const std::vector<Tensor> gi = split(linear(x, p.w_ih, bias), batch_sizes, 0);  // Note [Slicing the steps' rows]
  const Tensor w_hh_t = p.w_hh.t();
  const auto step = [&](const Tensor& gi_t, Tensor& h, Tensor& c) {
    if (gru) {
      h = ops::gru_cell(gi_t, linear(h, p.w_hh, p.b_hh), h);
      return;
    }
    const Tensor gates = addmm(gi_t, h, w_hh_t);
    if (!lstm) {
      h = rnn_step(gates, mode == RNNMode::RNN_RELU);
      return;
    }
    auto [h_next, c_next] = ops::lstm_cell(gates, c);
    c = std::move(c_next);
    h = p.w_hr.defined() ? linear(h_next, p.w_hr) : std::move(h_next);
  };
  const int64_t steps = static_cast<int64_t>(batch_sizes.size());
  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  DirectionResult r;
  if (!reverse) {
    Tensor h = h0, c = c0;
    std::vector<Tensor> ended_h, ended_c;  // final states of sequences that ended, last rows first
    int64_t running = h0.size(0);
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t b = batch_sizes[t];
      if (b < running) {
        ended_h.push_back(h.narrow(0, b, running - b));
        h = h.narrow(0, 0, b);
        if (lstm) ended_c.push_back(c.narrow(0, b, running - b)), c = c.narrow(0, 0, b);
        running = b;
      }
      step(gi[t], h, c);
      outputs[t] = h;
    }
    ended_h.push_back(h);
    std::reverse(ended_h.begin(), ended_h.end());
    r.h = ended_h.size() == 1 ? ended_h[0] : cat(ended_h, 0);
    if (lstm) {
      ended_c.push_back(c);
      std::reverse(ended_c.begin(), ended_c.end());
      r.c = ended_c.size() == 1 ? ended_c[0] : cat(ended_c, 0);
    }
  } else {
    int64_t running = steps > 0 ? batch_sizes.back() : h0.size(0);
    Tensor h = h0.narrow(0, 0, running), c = lstm ? c0.narrow(0, 0, running) : c0;
    for (int64_t t = steps - 1; t >= 0; --t) {
      const int64_t b = batch_sizes[t];
      if (b > running) {
        h = cat({h, h0.narrow(0, running, b - running)}, 0);
        if (lstm) c = cat({c, c0.narrow(0, running, b - running)}, 0);
        running = b;
      }
      step(gi[t], h, c);
      outputs[t] = h;
    }
    r.h = h, r.c = c;
  }
  r.output = outputs.size() == 1 ? outputs[0] : cat(outputs, 0);
  return r;
}

const char* layer_name(RNNMode mode) {
  switch (mode) {
    case RNNMode::LSTM:
      return "LSTM";
    case RNNMode::GRU:
      return "GRU";
    default:
      return "RNN";
  }
}

ops::RecurrenceMode recurrence_mode(RNNMode mode) {
  switch (mode) {
    case RNNMode::LSTM:
      return ops::RecurrenceMode::Lstm;
    case RNNMode::GRU:
      return ops::RecurrenceMode::Gru;
    case RNNMode::RNN_RELU:
      return ops::RecurrenceMode::RnnRelu;
    default:
      return ops::RecurrenceMode::RnnTanh;
  }
}

int64_t gate_count(RNNMode mode) {
  switch (mode) {
    case RNNMode::LSTM:
      return 4;
    case RNNMode::GRU:
      return 3;
    default:
      return 1;
  }
}

std::string tuple_text(const Shape& s) {
  std::string out = "(";
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + ")";
}

std::vector<int64_t> packed_batch_sizes(const utils::rnn::PackedSequence& packed) {
  if (!packed.data().defined() || !packed.batch_sizes().defined())
    throw ValueError("forward_with_packed_input: the PackedSequence has no data");
  const std::vector<int64_t> sizes = packed.batch_sizes().to(kInt64).contiguous().to_vector<int64_t>();
  if (sizes.empty()) throw ShapeError("Expected sequence length to be larger than 0 in RNN");
  return sizes;
}

}  // namespace

template <class Derived>
RNNImplBase<Derived>::RNNImplBase(const RNNOptionsBase& o) : options_base(o) {
  const std::string name = layer_name(o.mode());
  if (o.input_size() < 0 || o.hidden_size() <= 0 || o.num_layers() <= 0)
    throw ValueError(name + ": input_size must not be negative, hidden_size and num_layers must be positive, got " +
                     std::to_string(o.input_size()) + ", " + std::to_string(o.hidden_size()) + " and " +
                     std::to_string(o.num_layers()));
  if (!(o.dropout() >= 0 && o.dropout() <= 1))
    throw ValueError(name + ": dropout should be a number in range [0, 1] representing the probability of an element "
                            "being zeroed");
  if (o.proj_size() < 0)
    throw ValueError(name + ": proj_size should be a positive integer or zero to disable projections");
  if (o.proj_size() > 0 && o.mode() != RNNMode::LSTM)
    throw ValueError(name + ": proj_size argument is only supported for LSTM, not RNN or GRU");
  if (o.proj_size() >= o.hidden_size()) throw ValueError(name + ": proj_size has to be smaller than hidden_size");
  reset();
}

template <class Derived>
void RNNImplBase<Derived>::reset() {
  const RNNOptionsBase& o = options_base;
  const int64_t gates = gate_count(o.mode()) * o.hidden_size(), directions = o.bidirectional() ? 2 : 1;
  const int64_t real_hidden = o.proj_size() > 0 ? o.proj_size() : o.hidden_size();
  flat_weights_names_.clear(), all_weights_.clear(), flat_weights_.clear();
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t layer_input = layer == 0 ? o.input_size() : real_hidden * directions;
      const std::string suffix = std::to_string(layer) + (direction == 1 ? "_reverse" : "");
      // PyTorch's order, which is the state_dict's: weight_ih, weight_hh, bias_ih, bias_hh, weight_hr.
      std::vector<std::pair<std::string, Shape>> params = {{"weight_ih_l" + suffix, {gates, layer_input}},
                                                           {"weight_hh_l" + suffix, {gates, real_hidden}}};
      if (o.bias()) params.push_back({"bias_ih_l" + suffix, {gates}}), params.push_back({"bias_hh_l" + suffix, {gates}});
      if (o.proj_size() > 0) params.push_back({"weight_hr_l" + suffix, {o.proj_size(), o.hidden_size()}});
      std::vector<std::string> names;
      for (const auto& [n, shape] : params) {
        flat_weights_.push_back(this->register_parameter(n, empty(shape)));
        flat_weights_names_.push_back(n);
        names.push_back(n);
      }
      all_weights_.push_back(std::move(names));
    }
  }
  reset_parameters();
}

template <class Derived>
void RNNImplBase<Derived>::reset_parameters() {
  NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor& w : flat_weights_) init::uniform_(w, -bound, bound);
}

template <class Derived>
void RNNImplBase<Derived>::flatten_parameters() {
  const auto named = this->named_parameters(/*recurse=*/false);
  for (size_t k = 0; k < flat_weights_names_.size(); ++k) flat_weights_[k] = named[flat_weights_names_[k]];
}

template <class Derived>
std::vector<Tensor> RNNImplBase<Derived>::all_weights() const {
  return flat_weights_;
}

template <class Derived>
std::string RNNImplBase<Derived>::extra_repr() const {
  const RNNOptionsBase& o = options_base;
  std::string s = std::to_string(o.input_size()) + ", " + std::to_string(o.hidden_size());
  if (o.proj_size() != 0) s += ", proj_size=" + std::to_string(o.proj_size());
  if (o.num_layers() != 1) s += ", num_layers=" + std::to_string(o.num_layers());
  if (!o.bias()) s += ", bias=False";
  if (o.batch_first()) s += ", batch_first=True";
  if (o.dropout() != 0) s += ", dropout=" + python_float(o.dropout());
  if (o.bidirectional()) s += ", bidirectional=True";
  return s;
}

template <class Derived>
void RNNImplBase<Derived>::check_input(const Tensor& input, int64_t expected_dim) const {
  if (input.dim() != expected_dim)
    throw ShapeError(std::string(layer_name(options_base.mode())) + ": input must have " + std::to_string(expected_dim) +
                     " dimensions, got " + std::to_string(input.dim()));
  if (input.size(-1) != options_base.input_size())
    throw ShapeError(std::string(layer_name(options_base.mode())) +
                     ": input.size(-1) must be equal to input_size. Expected " +
                     std::to_string(options_base.input_size()) + ", got " + std::to_string(input.size(-1)));
}

template <class Derived>
Shape RNNImplBase<Derived>::expected_hidden_size(int64_t batch) const {
  const RNNOptionsBase& o = options_base;
  return {o.num_layers() * (o.bidirectional() ? 2 : 1), batch, o.proj_size() > 0 ? o.proj_size() : o.hidden_size()};
}

template <class Derived>
void RNNImplBase<Derived>::check_hidden_size(const Tensor& hx, const Shape& expected, const char* what) const {
  if (hx.shape() != expected)
    throw ShapeError(std::string(layer_name(options_base.mode())) + ": Expected " + what + " size " +
                     tuple_text(expected) + ", got " + shape_text(hx.shape()));
}

template <class Derived>
std::tuple<Tensor, Tensor, Tensor> RNNImplBase<Derived>::run_layers(const Tensor& input,
                                                                    const std::vector<int64_t>& batch_sizes,
                                                                    const Tensor& hx0, const Tensor& cx0) const {
  const RNNOptionsBase& o = options_base;
  if (batch_sizes.empty()) throw ShapeError("Expected sequence length to be larger than 0 in RNN");
  const int64_t directions = o.bidirectional() ? 2 : 1;
  const size_t per_direction = 2 + (o.bias() ? 2 : 0) + (o.proj_size() > 0 ? 1 : 0);
  const bool lstm = o.mode() == RNNMode::LSTM;
  const bool drop = o.dropout() > 0 && this->is_training() && o.num_layers() > 1;
  if (drop) warn_if_training_without_grad(layer_name(o.mode()));
  if (!drop) {  // the whole recurrence in one call where the device has one (Note [cuDNN RNNs])
    const ops::RecurrenceShape shape{recurrence_mode(o.mode()), o.input_size(), o.hidden_size(), o.proj_size(),
                                     o.num_layers(), o.bidirectional(), o.bias()};
    if (auto fused = ops::fused_recurrence(shape, input, batch_sizes, hx0, cx0, flat_weights_)) return *std::move(fused);
  }
  Tensor layer_input = input;
  std::vector<Tensor> hs, cs;
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    std::vector<Tensor> outputs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t index = layer * directions + direction;
      const Tensor* w = flat_weights_.data() + index * per_direction;
      LayerParameters p{w[0], w[1], {}, {}, {}};
      if (o.bias()) p.b_ih = w[2], p.b_hh = w[3];
      if (o.proj_size() > 0) p.w_hr = w[per_direction - 1];
      DirectionResult r = run_direction(o.mode(), layer_input, batch_sizes, hx0.select(0, index),
                                        lstm ? cx0.select(0, index) : Tensor(), p, direction == 1);
      outputs.push_back(std::move(r.output));
      hs.push_back(std::move(r.h));
      if (lstm) cs.push_back(std::move(r.c));
    }
    layer_input = directions == 1 ? outputs[0] : cat(outputs, 1);
    if (drop && layer + 1 < o.num_layers()) layer_input = locus::dropout(layer_input, o.dropout(), true);
  }
  return {layer_input, stack(hs, 0), lstm ? stack(cs, 0) : Tensor()};
}

namespace {

void check_defined(const Tensor& input, RNNMode mode) {
  if (!input.defined()) throw ValueError(std::string(layer_name(mode)) + ": input is an undefined tensor");
}

// A batched input [T, B, F] ([B, T, F] with batch_first) as time-major rows [T * B, F], T steps
// of B rows.
struct TimeMajor {
  Tensor rows;
  std::vector<int64_t> batch_sizes;
  int64_t steps = 0, batch = 0;
};

TimeMajor time_major_rows(const Tensor& input, bool batch_first) {
  TimeMajor p;
  const Tensor time_major = batch_first ? input.transpose(0, 1) : input;
  p.steps = time_major.size(0), p.batch = time_major.size(1);
  if (p.steps == 0) throw ShapeError("Expected sequence length to be larger than 0 in RNN");
  p.rows = time_major.reshape({p.steps * p.batch, time_major.size(2)});
  p.batch_sizes.assign(static_cast<size_t>(p.steps), p.batch);
  return p;
}

// The last layer's rows [T * B, F] back in the input's layout.
Tensor from_rows(const Tensor& rows, const TimeMajor& p, bool batch_first) {
  const Tensor out = rows.view({p.steps, p.batch, rows.size(1)});
  return batch_first ? out.transpose(0, 1) : out;
}

Tensor zero_state(const Shape& shape, const Tensor& like) {
  return zeros(shape, TensorOptions().dtype(like.dtype()).device(like.device()));
}

Tensor permute_state(const Tensor& state, const Tensor& permutation) {
  return permutation.defined() ? index_select(state, 1, permutation) : state;
}

void check_input_rank(const Tensor& input, RNNMode mode) {
  if (input.dim() != 2 && input.dim() != 3)
    throw ShapeError(std::string(layer_name(mode)) + ": Expected input to be 2-D or 3-D but received " +
                     std::to_string(input.dim()) + "-D tensor");
}

}  // namespace

template <class Derived>
std::tuple<Tensor, Tensor> RNNImplBase<Derived>::forward_one_state(const Tensor& input_in, Tensor hx) const {
  const RNNMode mode = options_base.mode();
  const std::string name = layer_name(mode);
  check_defined(input_in, mode);
  check_input_rank(input_in, mode);
  const bool batch_first = options_base.batch_first(), batched = input_in.dim() == 3;
  if (hx.defined()) {
    if (batched && hx.dim() != 3)
      throw ShapeError(name + ": For batched 3-D input, hx should also be 3-D but got " + std::to_string(hx.dim()) +
                       "-D tensor");
    if (!batched && hx.dim() != 2)
      throw ShapeError(name + ": For unbatched 2-D input, hx should also be 2-D but got " + std::to_string(hx.dim()) +
                       "-D tensor");
    if (!batched) hx = hx.unsqueeze(1);
  }
  const Tensor input = batched ? input_in : input_in.unsqueeze(batch_first ? 0 : 1);
  check_input(input, 3);
  const TimeMajor p = time_major_rows(input, batch_first);
  const Shape expected = expected_hidden_size(p.batch);
  if (!hx.defined()) hx = zero_state(expected, input);
  check_hidden_size(hx, expected, "hidden");
  check_operands(name, flat_weights_.front(), {{"input", &input}, {"hx", &hx}});
  auto [rows, h, c] = run_layers(p.rows, p.batch_sizes, hx, Tensor());
  const Tensor out = from_rows(rows, p, batch_first);
  if (!batched) return {out.squeeze(batch_first ? 0 : 1), h.squeeze(1)};
  return {out, h};
}

template <class Derived>
std::tuple<utils::rnn::PackedSequence, Tensor> RNNImplBase<Derived>::forward_one_state_packed(
    const utils::rnn::PackedSequence& packed, Tensor hx) const {
  const std::vector<int64_t> batch_sizes = packed_batch_sizes(packed);
  check_input(packed.data(), 2);
  const Shape expected = expected_hidden_size(batch_sizes.front());
  hx = hx.defined() ? permute_state(hx, packed.sorted_indices()) : zero_state(expected, packed.data());
  check_hidden_size(hx, expected, "hidden");
  check_operands(layer_name(options_base.mode()), flat_weights_.front(), {{"input", &packed.data()}, {"hx", &hx}});
  auto [rows, h, c] = run_layers(packed.data(), batch_sizes, hx, Tensor());
  return {utils::rnn::PackedSequence(rows, packed.batch_sizes(), packed.sorted_indices(), packed.unsorted_indices()),
          permute_state(h, packed.unsorted_indices())};
}

template class RNNImplBase<RNNImpl>;
template class RNNImplBase<LSTMImpl>;
template class RNNImplBase<GRUImpl>;

}  // namespace detail

using detail::RNNMode;

namespace {

detail::RNNOptionsBase rnn_base_options(const RNNOptions& o) {
  detail::RNNOptionsBase b(o.nonlinearity().kind == RNNNonlinearity::ReLU ? RNNMode::RNN_RELU : RNNMode::RNN_TANH,
                           o.input_size(), o.hidden_size());
  b.num_layers(o.num_layers()).bias(o.bias()).batch_first(o.batch_first()).dropout(o.dropout());
  b.bidirectional(o.bidirectional());
  return b;
}

detail::RNNOptionsBase gru_base_options(const GRUOptions& o) {
  detail::RNNOptionsBase b(RNNMode::GRU, o.input_size(), o.hidden_size());
  b.num_layers(o.num_layers()).bias(o.bias()).batch_first(o.batch_first()).dropout(o.dropout());
  b.bidirectional(o.bidirectional());
  return b;
}

detail::RNNOptionsBase lstm_base_options(const LSTMOptions& o) {
  detail::RNNOptionsBase b(RNNMode::LSTM, o.input_size(), o.hidden_size());
  b.num_layers(o.num_layers()).bias(o.bias()).batch_first(o.batch_first()).dropout(o.dropout());
  b.bidirectional(o.bidirectional()).proj_size(o.proj_size());
  return b;
}

}  // namespace

RNNNonlinearity::RNNNonlinearity(TransformerActivation::Kind which) : kind(ReLU) {
  if (which != TransformerActivation::ReLU)
    throw ValueError("RNN: the nonlinearity must be nn::kTanh or nn::kReLU (PyTorch's 'tanh' or 'relu')");
}

RNNNonlinearity::RNNNonlinearity(const char* name) : kind(Tanh) {
  const std::string n = name ? name : "";
  if (n == "relu") kind = ReLU;
  else if (n != "tanh") throw ValueError("RNN: Unknown nonlinearity '" + n + "'");
}

RNNImpl::RNNImpl(const RNNOptions& o) : RNNImplBase(rnn_base_options(o)), options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) { return forward_one_state(input, std::move(hx)); }

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  return forward_one_state_packed(packed_input, std::move(hx));
}

GRUImpl::GRUImpl(const GRUOptions& o) : RNNImplBase(gru_base_options(o)), options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) { return forward_one_state(input, std::move(hx)); }

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, Tensor hx) {
  return forward_one_state_packed(packed_input, std::move(hx));
}

LSTMImpl::LSTMImpl(const LSTMOptions& o) : RNNImplBase(lstm_base_options(o)), options(o) {}

namespace {

Shape cell_size(Shape hidden, int64_t hidden_size) {
  hidden[2] = hidden_size;
  return hidden;
}

}  // namespace

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input_in,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  detail::check_defined(input_in, RNNMode::LSTM);
  detail::check_input_rank(input_in, RNNMode::LSTM);
  const bool batch_first = options_base.batch_first(), batched = input_in.dim() == 3;
  Tensor hx, cx;
  if (hx_opt) {
    std::tie(hx, cx) = *hx_opt;
    if (!hx.defined() || !cx.defined()) throw ValueError("LSTM: hx and cx must both be defined when given");
    if (batched && (hx.dim() != 3 || cx.dim() != 3))
      throw ShapeError("LSTM: For batched 3-D input, hx and cx should also be 3-D but got (" + std::to_string(hx.dim()) +
                       "-D, " + std::to_string(cx.dim()) + "-D) tensors");
    if (!batched && (hx.dim() != 2 || cx.dim() != 2))
      throw ShapeError("LSTM: For unbatched 2-D input, hx and cx should also be 2-D but got (" +
                       std::to_string(hx.dim()) + "-D, " + std::to_string(cx.dim()) + "-D) tensors");
    if (!batched) hx = hx.unsqueeze(1), cx = cx.unsqueeze(1);
  }
  const Tensor input = batched ? input_in : input_in.unsqueeze(batch_first ? 0 : 1);
  check_input(input, 3);
  const detail::TimeMajor p = detail::time_major_rows(input, batch_first);
  const Shape expected_h = expected_hidden_size(p.batch), expected_c = cell_size(expected_h, options_base.hidden_size());
  if (!hx_opt) hx = detail::zero_state(expected_h, input), cx = detail::zero_state(expected_c, input);
  check_hidden_size(hx, expected_h, "hidden[0]");
  check_hidden_size(cx, expected_c, "hidden[1]");
  detail::check_operands("LSTM", flat_weights_.front(), {{"input", &input}, {"hx", &hx}, {"cx", &cx}});
  auto [rows, h, c] = run_layers(p.rows, p.batch_sizes, hx, cx);
  const Tensor out = detail::from_rows(rows, p, batch_first);
  if (!batched) return {out.squeeze(batch_first ? 0 : 1), {h.squeeze(1), c.squeeze(1)}};
  return {out, {h, c}};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  const std::vector<int64_t> batch_sizes = detail::packed_batch_sizes(packed);
  check_input(packed.data(), 2);
  const Shape expected_h = expected_hidden_size(batch_sizes.front()),
              expected_c = cell_size(expected_h, options_base.hidden_size());
  Tensor hx, cx;
  if (hx_opt) {
    std::tie(hx, cx) = *hx_opt;
    if (!hx.defined() || !cx.defined()) throw ValueError("LSTM: hx and cx must both be defined when given");
    hx = detail::permute_state(hx, packed.sorted_indices()), cx = detail::permute_state(cx, packed.sorted_indices());
  } else {
    hx = detail::zero_state(expected_h, packed.data()), cx = detail::zero_state(expected_c, packed.data());
  }
  check_hidden_size(hx, expected_h, "hidden[0]");
  check_hidden_size(cx, expected_c, "hidden[1]");
  detail::check_operands("LSTM", flat_weights_.front(), {{"input", &packed.data()}, {"hx", &hx}, {"cx", &cx}});
  auto [rows, h, c] = run_layers(packed.data(), batch_sizes, hx, cx);
  return {utils::rnn::PackedSequence(rows, packed.batch_sizes(), packed.sorted_indices(), packed.unsorted_indices()),
          {detail::permute_state(h, packed.unsorted_indices()), detail::permute_state(c, packed.unsorted_indices())}};
}

}  // namespace locus::nn
