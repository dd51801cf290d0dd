// The recurrent layers as modules: nn::RNN, nn::LSTM, nn::GRU and their cells (state_dict names
// and order as PyTorch's, loading a state_dict, the options and printed forms, initialisation,
// dropout between layers in training mode only, errors that leave the module as it was, clones,
// gradients) and nn::utils::rnn's packed sequences against the sequences run one by one, beside
// the golden family `rnn` for the values.

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/expect_error.h"
#include "tests/serialize/torch_script.h"
#include "tests/test_util.h"

namespace locus {
namespace {

namespace R = nn::utils::rnn;
using testing::values;

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, t] : m.state_dict()) out.push_back(name);
  return out;
}

std::vector<std::string> shapes(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, t] : m.state_dict()) {
    std::ostringstream os;
    os << t.shape();
    out.push_back(os.str());
  }
  return out;
}

void expect_close(const Tensor& a, const Tensor& b, double tol = 1e-6) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<double> x = values(a), y = values(b);
  for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(x[k], y[k], tol) << "element " << k;
}

// PyTorch 1.13's state_dict keys of nn.LSTM(3, 4, num_layers=2, bidirectional=True,
// proj_size=2): each layer's forward direction, then its reverse, weight_hr last.
TEST(Recurrent, LstmStateDictNamesAndShapesArePyTorchs) {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
  EXPECT_EQ(keys(*lstm),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
                                      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                      "bias_hh_l0_reverse", "weight_hr_l0_reverse", "weight_ih_l1", "weight_hh_l1",
                                      "bias_ih_l1", "bias_hh_l1", "weight_hr_l1", "weight_ih_l1_reverse",
                                      "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse",
                                      "weight_hr_l1_reverse"}));
  EXPECT_EQ(shapes(*lstm), (std::vector<std::string>{"[16, 3]", "[16, 2]", "[16]", "[16]", "[2, 4]", "[16, 3]", "[16, 2]",
                                                     "[16]", "[16]", "[2, 4]", "[16, 4]", "[16, 2]", "[16]", "[16]", "[2, 4]",
                                                     "[16, 4]", "[16, 2]", "[16]", "[16]", "[2, 4]"}));
  EXPECT_EQ(lstm->all_weights().size(), 20u);
}

TEST(Recurrent, GruAndRnnStateDictNames) {
  nn::GRU gru(nn::GRUOptions(5, 3).num_layers(2).bias(false));
  EXPECT_EQ(keys(*gru), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "weight_ih_l1", "weight_hh_l1"}));
  EXPECT_EQ(shapes(*gru), (std::vector<std::string>{"[9, 5]", "[9, 3]", "[9, 3]", "[9, 3]"}));
  nn::RNN rnn(nn::RNNOptions(5, 3).bidirectional(true));
  EXPECT_EQ(keys(*rnn), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                                  "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                                  "bias_hh_l0_reverse"}));
  nn::LSTMCell cell(3, 5);
  EXPECT_EQ(keys(*cell), (std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}));
  EXPECT_EQ(shapes(*cell), (std::vector<std::string>{"[20, 3]", "[20, 5]", "[20]", "[20]"}));
  EXPECT_EQ(keys(*nn::GRUCell(nn::GRUCellOptions(3, 5).bias(false))), (std::vector<std::string>{"weight_ih", "weight_hh"}));
}

// PyTorch's reset_parameters: every parameter uniform in +-1/sqrt(hidden_size).
TEST(Recurrent, InitialisationIsUniformInOneOverSqrtHidden) {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(8, 16).num_layers(2));
  double lo = 1, hi = -1;
  for (const Tensor& p : lstm->parameters())
    for (double v : values(p)) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_GE(lo, -0.25);
  EXPECT_LE(hi, 0.25);
  EXPECT_LT(lo, -0.24);  // thousands of draws reach the ends
  EXPECT_GT(hi, 0.24);
}

TEST(Recurrent, LoadingAStateDictGivesTheSameOutputs) {
  manual_seed(0);
  nn::LSTM a(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  nn::LSTM b(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  const Tensor x = randn({5, 2, 3});
  b->load_state_dict(a->state_dict());
  auto [ya, sa] = a(x);
  auto [yb, sb] = b(x);
  EXPECT_EQ(values(ya), values(yb));
  EXPECT_EQ(values(std::get<1>(sa)), values(std::get<1>(sb)));
  // A PyTorch state_dict of another layout is refused by name, and the module keeps its values.
  nn::LSTM c(nn::LSTMOptions(3, 4));
  const std::vector<double> before = values(c->parameters()[0]);
  EXPECT_THROW(c->load_state_dict(a->state_dict()), ValueError);
  EXPECT_EQ(values(c->parameters()[0]), before);
}

// A state_dict saved by PyTorch's torch.save (nn.LSTM(3, 5, num_layers=2, bidirectional=True,
// proj_size=2) after three SGD steps; tests/serialize/make_pytorch_checkpoints.py) loads as it
// is and computes PyTorch's outputs.
TEST(Recurrent, PyTorchsLstmStateDictLoadsAndComputesPyTorchsOutputs) {
  const auto dir = testing::source_path("tests/serialize/pytorch_checkpoints");
  ASSERT_FALSE(dir.empty());
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true).proj_size(2));
  const auto result = lstm->load_state_dict(load((dir / "lstm.pt").string()));
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_TRUE(result.unexpected_keys.empty());
  const auto io = load((dir / "lstm_forward.safetensors").string());
  NoGradGuard no_grad;
  auto [y, hc] = lstm(io.at("input"), std::make_tuple(io.at("h0"), io.at("c0")));
  expect_close(y, io.at("output"), 1e-6);
  expect_close(std::get<0>(hc), io.at("h_n"), 1e-6);
  expect_close(std::get<1>(hc), io.at("c_n"), 1e-6);
}

TEST(Recurrent, OptionsAndPrintedFormsArePyTorchs) {
  EXPECT_EQ(nn::LSTM(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5).bidirectional(true).batch_first(true).proj_size(2).bias(false))
                ->repr(),
            "LSTM(3, 4, proj_size=2, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)");
  EXPECT_EQ(nn::RNN(nn::RNNOptions(3, 4).nonlinearity(nn::kReLU))->repr(), "RNN(3, 4)");
  EXPECT_EQ(nn::GRU(nn::GRUOptions(3, 4).num_layers(2).dropout(0.25))->repr(), "GRU(3, 4, num_layers=2, dropout=0.25)");
  EXPECT_EQ(nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity("relu").bias(false))->repr(),
            "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  EXPECT_EQ(nn::GRUCell(3, 4)->repr(), "GRUCell(3, 4)");
  EXPECT_EQ(nn::LSTMCell(3, 4)->repr(), "LSTMCell(3, 4)");
  const auto o = nn::LSTMOptions(3, 4).num_layers(3).proj_size(2);
  EXPECT_EQ(o.num_layers(), 3);
  EXPECT_EQ(o.proj_size(), 2);
  EXPECT_EQ(nn::RNNOptions(1, 2).nonlinearity().kind, nn::RNNNonlinearity::Tanh);
  EXPECT_EQ(nn::LSTMCell(3, 4)->options_base.num_chunks(), 4);
  EXPECT_EQ(nn::GRU(nn::GRUOptions(3, 4).num_layers(2))->options_base.num_layers(), 2);
  EXPECT_EQ(nn::RNN(nn::RNNOptions(3, 4).nonlinearity("relu"))->options_base.mode(), nn::detail::RNNMode::RNN_RELU);
  EXPECT_THROW(nn::RNNOptions(1, 2).nonlinearity("gelu"), ValueError);
  EXPECT_THROW(nn::RNNOptions(1, 2).nonlinearity(nn::kGELU), ValueError);
}

TEST(Recurrent, OptionErrorsAreValueErrorsWithPyTorchsWords) {
  testing::expect_error<ValueError>([] { nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)); },
                                    "LSTM: proj_size has to be smaller than hidden_size");
  testing::expect_error<ValueError>([] { nn::GRU(nn::GRUOptions(3, 4).dropout(1.5)); },
                                    "GRU: dropout should be a number in range [0, 1] representing the probability of "
                                    "an element being zeroed");
  EXPECT_THROW(nn::LSTM(nn::LSTMOptions(3, 4).proj_size(-1)), ValueError);
  EXPECT_THROW(nn::LSTM(nn::LSTMOptions(3, 0)), ValueError);
  EXPECT_THROW(nn::GRU(nn::GRUOptions(3, 4).num_layers(0)), ValueError);
  EXPECT_THROW(nn::LSTMCell(3, -1), ValueError);
}

// Dropout acts between layers in training mode only; eval() gives the layer without it.
TEST(Recurrent, DropoutOnlyInTrainingMode) {
  manual_seed(1);
  nn::LSTM dropped(nn::LSTMOptions(4, 8).num_layers(2).dropout(0.5));
  nn::LSTM plain(nn::LSTMOptions(4, 8).num_layers(2));
  plain->load_state_dict(dropped->state_dict());
  const Tensor x = randn({6, 3, 4});
  const Tensor reference = std::get<0>(plain(x));
  dropped->eval();
  EXPECT_EQ(values(std::get<0>(dropped(x))), values(reference));
  dropped->train();
  const Tensor a = std::get<0>(dropped(x)), b = std::get<0>(dropped(x));
  EXPECT_NE(values(a), values(reference));
  EXPECT_NE(values(a), values(b));  // a new mask each call
  // One layer: nothing to drop between layers, as PyTorch (which warns).
  nn::GRU one(nn::GRUOptions(4, 8).dropout(0.5));
  nn::GRU one_plain(nn::GRUOptions(4, 8));
  one_plain->load_state_dict(one->state_dict());
  EXPECT_EQ(values(std::get<0>(one(x))), values(std::get<0>(one_plain(x))));
}

TEST(Recurrent, ErrorsLeaveTheModuleAsItWas) {
  manual_seed(2);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2));
  const Tensor x = randn({5, 2, 3});
  const Tensor before = std::get<0>(lstm(x));
  const auto state = lstm->state_dict();
  testing::expect_error<ShapeError>([&] { lstm(x, std::make_tuple(zeros({2, 3, 4}), zeros({2, 2, 4}))); },
                                    "LSTM: Expected hidden[0] size (2, 2, 4), got [2, 3, 4]");
  testing::expect_error<ShapeError>([&] { lstm(randn({5, 2, 6})); },
                                    "LSTM: input.size(-1) must be equal to input_size. Expected 3, got 6");
  EXPECT_THROW(lstm(randn({5})), ShapeError);
  EXPECT_THROW(lstm(Tensor()), ValueError);
  EXPECT_THROW(lstm(randn({0, 2, 3})), ShapeError);
  EXPECT_EQ(values(std::get<0>(lstm(x))), values(before));
  for (const auto& [name, t] : lstm->state_dict()) EXPECT_EQ(values(t), values(state[name])) << name;
  nn::GRUCell cell(3, 4);
  testing::expect_error<ShapeError>([&] { cell(randn({2, 3}), randn({3, 4})); },
                                    "GRUCell: Input batch size 2 doesn't match hidden0 batch size 3");
  EXPECT_EQ(cell(randn({2, 3})).shape(), (Shape{2, 4}));
}

// Every parameter and the initial states get a gradient; a clone is independent and equal.
TEST(Recurrent, GradientsReachEveryParameterAndClonesAreEqual) {
  manual_seed(4);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  const Tensor x = randn({2, 5, 3}).requires_grad_(), h0 = randn({4, 2, 4}).requires_grad_();
  auto [y, h] = gru(x, h0);
  (y.sum() + h.sum()).backward();
  for (const auto& [name, p] : gru->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_GT(values(p.grad().abs().sum())[0], 0.0) << name;
  }
  EXPECT_TRUE(x.grad().defined());
  EXPECT_TRUE(h0.grad().defined());
  auto copy = std::dynamic_pointer_cast<nn::GRUImpl>(gru->clone());
  ASSERT_TRUE(copy);
  NoGradGuard no_grad;
  EXPECT_EQ(values(std::get<0>(copy->forward(x, h0))), values(std::get<0>(gru(x, h0))));
  copy->parameters()[0].fill_(0.0);
  EXPECT_NE(values(std::get<0>(copy->forward(x, h0))), values(std::get<0>(gru(x, h0))));
}

// Second derivatives go through the layer (a gradient penalty on the input): against central
// differences of the first gradient, in float64.
TEST(Recurrent, SecondDerivativesMatchFiniteDifferences) {
  manual_seed(9);
  nn::LSTM lstm(nn::LSTMOptions(2, 3).num_layers(2).bidirectional(true));
  lstm->to(kFloat64);
  const Tensor x0 = randn({3, 2, 2}, kFloat64);
  const auto penalty = [&](const Tensor& x, bool create_graph) {
    const Tensor y = std::get<0>(lstm(x));
    const Tensor g = autograd::grad({(y * y).sum()}, {x}, {}, true, create_graph)[0];
    return (g * g).sum();
  };
  const Tensor x = x0.clone().requires_grad_();
  penalty(x, true).backward();
  const std::vector<double> analytic = values(x.grad());
  const double eps = 1e-6;
  for (int64_t k : {0, 5, 11}) {
    const auto at = [&](double delta) {
      Tensor xd = x0.clone();
      xd.view({-1})[k].fill_(values(x0.view({-1})[k])[0] + delta);
      return values(penalty(xd.requires_grad_(), false))[0];
    };
    EXPECT_NEAR(analytic[static_cast<size_t>(k)], (at(eps) - at(-eps)) / (2 * eps), 1e-6) << k;
  }
}

// The layers follow their parameters to another dtype (forward reads the same tensors).
TEST(Recurrent, ConvertedLayerRunsInFloat64) {
  manual_seed(5);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).proj_size(2));
  const Tensor x = randn({4, 2, 3});
  const Tensor y32 = std::get<0>(lstm(x));
  lstm->to(kFloat64);
  const Tensor y64 = std::get<0>(lstm(x.to(kFloat64)));
  EXPECT_EQ(y64.dtype(), kFloat64);
  expect_close(y64, y32, 1e-6);
}

// The last layer's output of one step is the cell's: the layers and cells share their gates.
TEST(Recurrent, OneStepOfALayerIsItsCell) {
  manual_seed(6);
  nn::LSTM lstm(3, 4);
  nn::LSTMCell cell(3, 4);
  cell->load_state_dict({{"weight_ih", lstm->state_dict()["weight_ih_l0"]},
                         {"weight_hh", lstm->state_dict()["weight_hh_l0"]},
                         {"bias_ih", lstm->state_dict()["bias_ih_l0"]},
                         {"bias_hh", lstm->state_dict()["bias_hh_l0"]}});
  const Tensor x = randn({1, 2, 3}), h0 = randn({1, 2, 4}), c0 = randn({1, 2, 4});
  auto [y, hc] = lstm(x, std::make_tuple(h0, c0));
  auto [h, c] = cell(x[0], std::make_tuple(h0[0], c0[0]));
  expect_close(y[0], h);
  expect_close(std::get<1>(hc)[0], c);
}

// A packed batch gives each sequence what running it alone gives, and pad_packed_sequence
// restores the caller's order.
TEST(Recurrent, PackedSequencesRunAsEachSequenceAlone) {
  manual_seed(7);
  nn::GRU gru(nn::GRUOptions(3, 4).bidirectional(true).num_layers(2));
  const std::vector<Tensor> seqs = {randn({2, 3}), randn({5, 3}), randn({3, 3})};
  const R::PackedSequence packed = R::pack_sequence(seqs, /*enforce_sorted=*/false);
  EXPECT_EQ(values(packed.batch_sizes()), (std::vector<double>{3, 3, 2, 1, 1}));
  EXPECT_EQ(values(packed.sorted_indices()), (std::vector<double>{1, 2, 0}));
  EXPECT_EQ(values(packed.unsorted_indices()), (std::vector<double>{2, 0, 1}));
  auto [out, h] = gru->forward_with_packed_input(packed);
  auto [padded, lengths] = R::pad_packed_sequence(out, /*batch_first=*/true);
  EXPECT_EQ(values(lengths), (std::vector<double>{2, 5, 3}));
  EXPECT_EQ(padded.shape(), (Shape{3, 5, 8}));
  for (size_t b = 0; b < seqs.size(); ++b) {
    auto [alone, h_alone] = gru(seqs[b]);
    const int64_t n = seqs[b].size(0);
    expect_close(padded[static_cast<int64_t>(b)].narrow(0, 0, n), alone);
    expect_close(h.select(1, static_cast<int64_t>(b)), h_alone);
    if (n < 5) EXPECT_EQ(values(padded[static_cast<int64_t>(b)].narrow(0, n, 5 - n).abs().sum())[0], 0.0);
  }
}

TEST(Recurrent, PackingErrors) {
  const Tensor x = zeros({4, 3, 2});
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{2, 4, 1})), ValueError);
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{4, 2, 0})), ValueError);
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{5, 2, 1})), ValueError);  // PyTorch reads past T
  EXPECT_THROW(R::pack_padded_sequence(x, tensor(std::vector<int64_t>{4, 2})), ValueError);
  EXPECT_THROW(R::pack_padded_sequence(x, tensor({4.0, 2.0, 1.0})), ValueError);
  EXPECT_THROW(R::pad_sequence({}), ValueError);
  EXPECT_THROW(R::pad_sequence({zeros({2, 3}), zeros({3, 2})}), ShapeError);
  const R::PackedSequence p = R::pack_padded_sequence(x, tensor(std::vector<int64_t>{4, 2, 1}));
  EXPECT_THROW(R::pad_packed_sequence(p, false, 0.0, 3), ValueError);
  EXPECT_THROW(R::PackedSequence(zeros({3, 2}), tensor(std::vector<int64_t>{2, 1}).to(Device("sim:0"))), ValueError);
  nn::LSTM lstm(3, 4);
  EXPECT_THROW(lstm->forward_with_packed_input(p), ShapeError);  // 2 features, not 3
}

TEST(Recurrent, RunsOnTheSimDevice) {
  manual_seed(8);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).bidirectional(true));
  const Tensor x = randn({4, 2, 3});
  const Tensor cpu = std::get<0>(lstm(x));
  lstm->to(Device("sim:0"));
  const Tensor sim = std::get<0>(lstm(x.to(Device("sim:0"))));
  EXPECT_EQ(sim.device(), Device("sim:0"));
  EXPECT_EQ(values(sim.cpu()), values(cpu));
  try {
    lstm(x);
    ADD_FAILURE() << "no DeviceMismatchError";
  } catch (const DeviceMismatchError& e) {
    EXPECT_EQ(e.argument(), "input");
    EXPECT_EQ(e.op(), "LSTM");
  }
}

// A dtype mismatch names the layer and the operand before any op runs (PyTorch: "mat1 and mat2
// must have the same dtype").
TEST(Recurrent, DtypeMismatchNamesTheLayerAndTheOperand) {
  nn::GRU gru(3, 4);
  testing::expect_error<DTypeError>([&] { gru(zeros({2, 1, 3}, kFloat64)); },
                                    "GRU: input is float64 but the parameters are float32; convert input with "
                                    ".to(float32) or the module with ->to(float64)");
  EXPECT_THROW(gru(zeros({2, 1, 3}), zeros({1, 1, 4}, kFloat64)), DTypeError);
  nn::LSTM lstm(3, 4);
  EXPECT_THROW(lstm(zeros({2, 1, 3}), std::make_tuple(zeros({1, 1, 4}), zeros({1, 1, 4}, kInt64))), DTypeError);
  EXPECT_THROW(nn::LSTMCell(3, 4)(zeros({2, 3}, kFloat64)), DTypeError);
  EXPECT_THROW(nn::RNNCell(3, 4)(zeros({2, 3}).to(Device("sim:0"))), DeviceMismatchError);
}

}  // namespace
}  // namespace locus
