// The recurrent layers as a LibTorch program spells them, through the compatibility header:
// torch::nn::LSTM / GRU / RNN with their options, forward's tuples, the cells,
// torch::nn::utils::rnn's packing and forward_with_packed_input.

#include <torch/torch.h>

#include <gtest/gtest.h>

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
