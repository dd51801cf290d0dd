// A character-level language model, the transformer counterpart of the tutorials' loop: token
// and position embeddings, pre-norm encoder layers under a causal mask, AdamW with warm-up and
// cosine decay, then text sampled from the model. A small one, so that it trains in seconds;
// `locus charlm` trains the full-size model (docs/training.md).
//   class CharLM(nn.Module):
//       def __init__(self, vocab, block, d=64, heads=4, layers=2):
//           self.tok_emb = nn.Embedding(vocab, d); self.pos_emb = nn.Embedding(block, d)
//           layer = nn.TransformerEncoderLayer(d, heads, 4 * d, 0.1, 'gelu', batch_first=True, norm_first=True)
//           self.encoder = nn.TransformerEncoder(layer, layers); self.ln_f = nn.LayerNorm(d)
//           self.head = nn.Linear(d, vocab)
//       def forward(self, ids):
//           t = ids.shape[1]
//           x = self.tok_emb(ids) + self.pos_emb(torch.arange(t, device=ids.device))
//           mask = nn.Transformer.generate_square_subsequent_mask(t, device=ids.device)
//           return self.head(self.ln_f(self.encoder(x, mask, is_causal=True)))
// The text: the quotes of Debian's `fortunes` package (scripts/install-deps.sh installs it).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <numbers>
#include <string>
#include <vector>

#include "examples/example_main.h"
#include "locus/locus.h"

using namespace locus;

class CharLMImpl : public nn::Module {
 public:
  CharLMImpl(int64_t vocab, int64_t block, int64_t d = 64, int64_t heads = 4, int64_t layers = 2) {
    tok_emb = register_module("tok_emb", nn::Embedding(vocab, d));
    pos_emb = register_module("pos_emb", nn::Embedding(block, d));
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(d, heads)
                                          .dim_feedforward(4 * d)
                                          .dropout(0.1)
                                          .activation(nn::kGELU)
                                          .batch_first(true)
                                          .norm_first(true));
    encoder = register_module("encoder", nn::TransformerEncoder(layer, layers));
    ln_f = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({d})));
    head = register_module("head", nn::Linear(d, vocab));
  }
  Tensor forward(const Tensor& ids) override {
    const int64_t t = ids.size(1);
    const Tensor x = tok_emb(ids) + pos_emb(arange(t, TensorOptions().dtype(kInt64).device(ids.device())));
    const Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(t, TensorOptions().device(ids.device()));
    return head(ln_f(encoder(x, mask, Tensor(), /*is_causal=*/true)));
  }

 private:
  nn::Embedding tok_emb{nullptr}, pos_emb{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::LayerNorm ln_f{nullptr};
  nn::Linear head{nullptr};
};
LOCUS_MODULE(CharLM);

// `rows` windows of `block` + 1 characters at random places in ids[begin, end).
std::pair<Tensor, Tensor> batch(const std::vector<int64_t>& ids, int64_t begin, int64_t end, int64_t rows, int64_t block) {
  const std::vector<int64_t> starts = randint(begin, end - block - 1, {rows}).to_vector<int64_t>();
  std::vector<int64_t> x, y;
  for (int64_t s : starts) {
    x.insert(x.end(), ids.begin() + s, ids.begin() + s + block);
    y.insert(y.end(), ids.begin() + s + 1, ids.begin() + s + block + 1);
  }
  return {tensor(x, {rows, block}), tensor(y, {rows, block})};
}

void example() {
  const Device device = best_device();
  // LOCUS_FORTUNES names another copy of the file (the GPU check carries one: its machine has no Debian packages).
  const char* chosen = std::getenv("LOCUS_FORTUNES");
  const std::string path = chosen ? chosen : "/usr/share/games/fortunes/fortunes";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError("this example reads " + path + ": apt-get install fortunes, or set LOCUS_FORTUNES");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<char> vocabulary(text.begin(), text.end());
  std::sort(vocabulary.begin(), vocabulary.end());
  vocabulary.erase(std::unique(vocabulary.begin(), vocabulary.end()), vocabulary.end());
  std::vector<int64_t> ids;
  for (char c : text) ids.push_back(std::lower_bound(vocabulary.begin(), vocabulary.end(), c) - vocabulary.begin());
  const auto vocab = static_cast<int64_t>(vocabulary.size()), block = int64_t{64}, split = static_cast<int64_t>(ids.size()) * 9 / 10;

  manual_seed(0);
  auto model = CharLM(vocab, block);
  model->to(device);
  optim::AdamW optimizer(model->parameters(), optim::AdamOptions(3e-3).weight_decay(0.01));
  const int steps = 60, warmup = 10;
  const std::pair<Tensor, Tensor> validation = batch(ids, split, static_cast<int64_t>(ids.size()), 32, block);
  const Tensor &val_x = validation.first, &val_y = validation.second;  // clang 14: a lambda cannot capture a structured binding
  const auto validation_loss = [&] {
    model->eval();
    NoGradGuard no_grad;
    const float loss = nn::functional::cross_entropy(model(val_x.to(device)).view({-1, vocab}), val_y.to(device).view({-1})).item<float>();
    model->train();
    return loss;
  };
  std::cout << "vocabulary " << vocab << ", validation loss before training " << validation_loss() << " nats/char\n";
  for (int step = 0; step < steps; ++step) {
    // Linear warm-up, then cosine decay to a tenth.
    const double progress = step < warmup ? 0.0 : static_cast<double>(step - warmup) / (steps - warmup);
    const double lr = 3e-3 * (step < warmup ? (step + 1.0) / warmup : 0.1 + 0.45 * (1 + std::cos(std::numbers::pi * progress)));
    for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
    const auto [x, y] = batch(ids, 0, split, 16, block);
    const Tensor loss = nn::functional::cross_entropy(model(x.to(device)).view({-1, vocab}), y.to(device).view({-1}));
    optimizer.zero_grad();
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    optimizer.step();
    if ((step + 1) % 20 == 0) std::cout << "step " << step + 1 << ": train loss " << loss.item<float>() << "\n";
  }
  const float val = validation_loss();
  std::cout << "validation loss " << val << " nats/char (" << val / std::numbers::ln2 << " bits/char)\n";
  // Sampling: feed the last `block` characters, draw the next from the softmax.
  model->eval();
  NoGradGuard no_grad;
  std::vector<int64_t> context{std::lower_bound(vocabulary.begin(), vocabulary.end(), '\n') - vocabulary.begin()};
  std::string sample;
  for (int i = 0; i < 120; ++i) {
    const int64_t t = std::min<int64_t>(static_cast<int64_t>(context.size()), block);
    const std::vector<int64_t> window(context.end() - t, context.end());
    const Tensor logits = model(tensor(window, {1, t}).to(device)).select(1, t - 1);
    context.push_back(multinomial(softmax(logits, -1), 1).item<int64_t>());
    sample += vocabulary[static_cast<size_t>(context.back())];
  }
  std::cout << "sample:\n" << sample << "\n";
}
