// The Locus calls of the `rnn` golden family (gen_rnn.py): nn::RNN, nn::LSTM and nn::GRU (their
// parameters are the case's inputs, named as in the state_dict), the three cells, and
// nn::utils::rnn's packing functions. `join=1` returns every output flattened into one vector,
// as the generator's gradient cases do.

#include <memory>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/golden/golden_ops.h"

namespace locus::golden {
namespace {

namespace R = locus::nn::utils::rnn;

// A recurrent layer whose forward reads the case's inputs as its parameters (in state_dict
// order, by name), so that the gradients reach them: the list forward uses is LibTorch's
// protected flat_weights_, which a subclass may set.
template <class Impl>
struct LayerOnInputs : Impl {
  using Impl::Impl;
  void use_inputs(const Ctx& c) {
    for (size_t k = 0; k < this->flat_weights_names_.size(); ++k) {
      const Tensor v = c.named(this->flat_weights_names_[k].c_str());
      if (!v.defined()) throw ValueError("the case has no input " + this->flat_weights_names_[k]);
      this->flat_weights_[k] = v;
    }
  }
};

template <class Options>
Options layer_options(const Ctx& c) {
  Options o(c.i64("input_size"), c.i64("hidden_size"));
  o.num_layers(c.i64("num_layers", 1)).bias(!c.has("bias") || c.flag("bias")).batch_first(c.flag("batch_first"));
  o.dropout(c.f64("dropout", 0.0)).bidirectional(c.flag("bidirectional"));
  return o;
}

Outs joined(const Ctx& c, Outs outs) {
  if (!c.flag("join")) return outs;
  std::vector<Tensor> flat;
  for (const Tensor& t : outs) flat.push_back(t.reshape({-1}));
  return {cat(flat, 0)};
}

std::optional<R::PackedSequence> packed_input(const Ctx& c) {
  const Tensor lengths = c.named("lengths");
  if (!lengths.defined()) return std::nullopt;
  return R::pack_padded_sequence(c.named("input"), lengths, c.flag("batch_first"),
                                 !c.has("enforce_sorted") || c.flag("enforce_sorted"));
}

template <class Impl>
std::shared_ptr<LayerOnInputs<Impl>> layer_on_inputs(const Ctx& c, const auto& options) {
  auto m = std::make_shared<LayerOnInputs<Impl>>(options);
  m->eval();
  m->use_inputs(c);
  return m;
}

// A one-state layer (RNN, GRU).
template <class Impl, class Options>
Outs single_state(const Ctx& c, const Options& options) {
  auto m = layer_on_inputs<Impl>(c, options);
  if (auto packed = packed_input(c)) {
    auto [out, h] = m->forward_with_packed_input(*packed, c.named("h0"));
    return joined(c, {out.data(), h});
  }
  auto [out, h] = m->forward(c.named("input"), c.named("h0"));
  return joined(c, {out, h});
}

Outs rnn(const Ctx& c) {
  const std::string& mode = c.str("mode");
  if (mode == "LSTM") {
    auto m = layer_on_inputs<nn::LSTMImpl>(c, layer_options<nn::LSTMOptions>(c).proj_size(c.i64("proj_size", 0)));
    std::optional<std::tuple<Tensor, Tensor>> state;
    if (c.named("h0").defined()) state = std::make_tuple(c.named("h0"), c.named("c0"));
    if (auto packed = packed_input(c)) {
      auto [out, hc] = m->forward_with_packed_input(*packed, state);
      return joined(c, {out.data(), std::get<0>(hc), std::get<1>(hc)});
    }
    auto [out, hc] = m->forward(c.named("input"), state);
    return joined(c, {out, std::get<0>(hc), std::get<1>(hc)});
  }
  if (mode == "GRU") return single_state<nn::GRUImpl>(c, layer_options<nn::GRUOptions>(c));
  auto o = layer_options<nn::RNNOptions>(c);
  o.nonlinearity(mode == "RNN_RELU" ? nn::RNNNonlinearity(nn::kReLU) : nn::RNNNonlinearity(nn::kTanh));
  return single_state<nn::RNNImpl>(c, o);
}

// A cell whose parameters are the case's inputs.
template <class Cell>
void cell_on_inputs(Cell& m, const Ctx& c) {
  m->weight_ih = c.named("weight_ih");
  m->weight_hh = c.named("weight_hh");
  m->bias_ih = c.named("bias_ih");
  m->bias_hh = c.named("bias_hh");
}

Outs rnn_cell(const Ctx& c) {
  const std::string& mode = c.str("mode");
  const int64_t in = c.i64("input_size"), hidden = c.i64("hidden_size");
  const bool bias = !c.has("bias") || c.flag("bias");
  if (mode == "LSTM") {
    nn::LSTMCell m(nn::LSTMCellOptions(in, hidden).bias(bias));
    cell_on_inputs(m, c);
    std::optional<std::tuple<Tensor, Tensor>> state;
    if (c.named("h0").defined()) state = std::make_tuple(c.named("h0"), c.named("c0"));
    auto [h, cell] = m(c.named("input"), state);
    return joined(c, {h, cell});
  }
  if (mode == "GRU") {
    nn::GRUCell m(nn::GRUCellOptions(in, hidden).bias(bias));
    cell_on_inputs(m, c);
    return {m(c.named("input"), c.named("h0"))};
  }
  nn::RNNCell m(nn::RNNCellOptions(in, hidden).bias(bias).nonlinearity(mode == "RNN_RELU" ? "relu" : "tanh"));
  cell_on_inputs(m, c);
  return {m(c.named("input"), c.named("h0"))};
}

Outs packed_outputs(const R::PackedSequence& p) {
  Outs outs{p.data(), p.batch_sizes()};
  if (p.sorted_indices().defined()) outs.push_back(p.sorted_indices()), outs.push_back(p.unsorted_indices());
  return outs;
}

R::PackedSequence pack(const Ctx& c) {
  return R::pack_padded_sequence(c.named("input"), c.named("lengths"), c.flag("batch_first"),
                                 !c.has("enforce_sorted") || c.flag("enforce_sorted"));
}

std::vector<Tensor> sequences(const Ctx& c) { return c.in; }

const OpRegistrar registered{
    {"rnn", rnn},
    {"rnn_cell", rnn_cell},
    {"pack_padded_sequence",
     [](const Ctx& c) -> Outs {
       const R::PackedSequence p = pack(c);
       if (c.flag("join")) return {p.data()};
       return packed_outputs(p);
     }},
    {"pad_packed_sequence",
     [](const Ctx& c) -> Outs {
       const std::optional<int64_t> total = c.has("total_length") ? std::optional<int64_t>(c.i64("total_length")) : std::nullopt;
       auto [padded, lengths] = R::pad_packed_sequence(pack(c), c.flag("batch_first"), c.f64("padding_value", 0.0), total);
       if (c.flag("join")) return {padded};
       return {padded, lengths};
     }},
    {"pad_sequence",
     [](const Ctx& c) -> Outs { return {R::pad_sequence(sequences(c), c.flag("batch_first"), c.f64("padding_value", 0.0))}; }},
    {"pack_sequence",
     [](const Ctx& c) -> Outs {
       return packed_outputs(R::pack_sequence(sequences(c), !c.has("enforce_sorted") || c.flag("enforce_sorted")));
     }},
};

}  // namespace
}  // namespace locus::golden
