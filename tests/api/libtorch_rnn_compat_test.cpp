// The recurrent layers as a LibTorch program spells them, through the compatibility header:
// torch::nn::LSTM / GRU / RNN with their options, forward's tuples, the cells,
// torch::nn::utils::rnn's packing and forward_with_packed_input.

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace {

// A LibTorch-style sequence classifier: an LSTM over packed sequences, the last hidden state of
// the top layer into a Linear.
struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl() {
    lstm = register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(3, 8).num_layers(2).batch_first(true)));
    fc = register_module("fc", torch::nn::Linear(8, 2));
  }
  torch::Tensor forward(const torch::Tensor& padded, const torch::Tensor& lengths) {
    auto packed = torch::nn::utils::rnn::pack_padded_sequence(padded, lengths, /*batch_first=*/true,
                                                              /*enforce_sorted=*/false);
    auto out = lstm->forward_with_packed_input(packed);
    torch::Tensor h_n = std::get<0>(std::get<1>(out));
    return fc(h_n[-1]);
  }
  torch::nn::LSTM lstm{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Classifier);

TEST(LibTorchRnnCompat, ALibTorchSequenceClassifierTrains) {
  torch::manual_seed(0);
  Classifier model;
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(0.05));
  const torch::Tensor x = torch::randn({4, 5, 3});
  const torch::Tensor lengths = torch::tensor(std::vector<int64_t>{5, 2, 4, 3});
  const torch::Tensor y = torch::tensor(std::vector<int64_t>{0, 1, 1, 0});
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x, lengths), y);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<float>();
  }
  EXPECT_LT(last, first * 0.5f);
}

TEST(LibTorchRnnCompat, LayersAndCellsAsLibTorchSpellsThem) {
  torch::nn::GRU gru(torch::nn::GRUOptions(4, 6).bidirectional(true));
  torch::Tensor out, h;
  std::tie(out, h) = gru->forward(torch::randn({7, 2, 4}));
  EXPECT_EQ(out.sizes(), (torch::IntArrayRef{7, 2, 12}));
  EXPECT_EQ(h.sizes(), (torch::IntArrayRef{2, 2, 6}));
  torch::nn::RNN rnn(torch::nn::RNNOptions(4, 6).nonlinearity(torch::nn::kReLU).num_layers(3));
  EXPECT_EQ(std::get<1>(rnn(torch::randn({7, 2, 4}))).sizes(), (torch::IntArrayRef{3, 2, 6}));
  torch::nn::LSTMCell cell(torch::nn::LSTMCellOptions(4, 6));
  auto hc = cell(torch::randn({2, 4}));
  hc = cell(torch::randn({2, 4}), hc);
  EXPECT_EQ(std::get<1>(hc).sizes(), (torch::IntArrayRef{2, 6}));
  EXPECT_EQ(torch::nn::GRUCell(4, 6)(torch::randn({4})).sizes(), (torch::IntArrayRef{6}));
  const auto padded = torch::nn::utils::rnn::pad_sequence({torch::ones({3, 2}), torch::ones({1, 2})}, true, -1.0);
  EXPECT_EQ(padded.sizes(), (torch::IntArrayRef{2, 3, 2}));
}

}  // namespace

namespace {

// LibTorch's top-level constants serve every option that takes them: torch::kReLU as an init
// gain's nonlinearity, an RNN's and a transformer layer's; torch::kTanh, torch::kLinear likewise.
TEST(LibTorchRnnCompat, SharedConstantsConvertToEachOption) {
  torch::nn::RNN relu(torch::nn::RNNOptions(2, 3).nonlinearity(torch::kReLU));
  torch::nn::RNN tanh(torch::nn::RNNOptions(2, 3).nonlinearity(torch::kTanh));
  EXPECT_EQ(relu->options.nonlinearity().kind, torch::nn::RNNNonlinearity::ReLU);
  EXPECT_EQ(tanh->options.nonlinearity().kind, torch::nn::RNNNonlinearity::Tanh);
  EXPECT_DOUBLE_EQ(torch::nn::init::calculate_gain(torch::kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(torch::nn::init::calculate_gain(torch::kTanh), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(torch::nn::init::calculate_gain(torch::kLinear), 1.0);
  torch::Tensor w = torch::empty({4, 5});
  torch::nn::init::kaiming_normal_(w, 0.0, torch::kFanOut, torch::kReLU);
  EXPECT_GT(w.std().item<double>(), 0.0);
  torch::nn::TransformerEncoderLayer gelu(torch::nn::TransformerEncoderLayerOptions(4, 2).activation(torch::kGELU));
  torch::nn::TransformerEncoderLayer relu_layer(torch::nn::TransformerEncoderLayerOptions(4, 2).activation(torch::kReLU));
  EXPECT_EQ(gelu->options.activation().kind, torch::nn::TransformerActivation::GELU);
  EXPECT_EQ(relu_layer->options.activation().kind, torch::nn::TransformerActivation::ReLU);
  const torch::Tensor x = torch::arange(4.0).view({1, 1, 4});
  const torch::Tensor up = torch::nn::functional::interpolate(
      x, torch::nn::functional::InterpolateFuncOptions().size(std::vector<int64_t>{8}).mode(torch::kLinear));
  EXPECT_EQ(up.sizes(), (torch::IntArrayRef{1, 1, 8}));
}

}  // namespace
