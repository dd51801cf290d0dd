#pragma once
// The character-level language model of `locus charlm`, its data and its recipe, as
// scripts/reference/torch_char_lm.py has them in PyTorch 1.13 (that script's docstring is the
// specification): the same state_dict names, corpus, split, batches, schedule and validation
// loss, so the two train the same model and their checkpoints go both ways.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>
#include <string>
#include <vector>

#include "locus/locus.h"

namespace locus::cli {

/// The fortune files of Debian's `fortunes` package.
inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";

/// The model's sizes (torch_char_lm.py's defaults).
struct CharLMConfig {
  int64_t vocab = 0, block_size = 128, d_model = 128, heads = 4, layers = 4, ff = 512;
  double dropout = 0.1;
};

/// Token and position embeddings, pre-norm encoder layers under a causal mask, a final
/// LayerNorm and the head: tok_emb, pos_emb, encoder.layers.N.*, ln_f, head.
class CharLMImpl : public nn::Module {
 public:
  explicit CharLMImpl(const CharLMConfig& c) : config(c) {
    tok_emb = register_module("tok_emb", nn::Embedding(c.vocab, c.d_model));
    pos_emb = register_module("pos_emb", nn::Embedding(c.block_size, c.d_model));
    const nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(c.d_model, c.heads)
                                                .dim_feedforward(c.ff)
                                                .dropout(c.dropout)
                                                .activation(nn::kGELU)
                                                .batch_first(true)
                                                .norm_first(true));
    encoder = register_module("encoder", nn::TransformerEncoder(layer, c.layers));
    ln_f = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({c.d_model})));
    head = register_module("head", nn::Linear(c.d_model, c.vocab));
  }
  /// Logits [B, t, V] for token ids [B, t] (t <= block_size). The causal mask is passed with
  /// the is_causal hint, so attention can skip the masked half.
  Tensor forward(const Tensor& ids) override {
    const int64_t t = ids.size(1);
    const Tensor positions = arange(t, TensorOptions().dtype(kInt64).device(ids.device()));
    const Tensor x = add(tok_emb(ids), pos_emb(positions));
    const Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(t, TensorOptions().device(ids.device()));
    return head(ln_f(encoder(x, mask, Tensor(), /*is_causal=*/true)));
  }
  CharLMConfig config;
  nn::Embedding tok_emb{nullptr}, pos_emb{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::LayerNorm ln_f{nullptr};
  nn::Linear head{nullptr};
};
LOCUS_MODULE(CharLM);

/// The corpus as token ids, its vocabulary (byte values by rank) and the training part's size.
struct Corpus {
  std::vector<int64_t> ids;
  std::vector<uint8_t> vocabulary;
  int64_t n_train = 0;
  int64_t size() const { return static_cast<int64_t>(ids.size()); }
};

/// Every regular file directly in `dir` whose name has no '.', sorted by name, concatenated;
/// IOError when there is none.
inline Corpus load_corpus(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find('.') == std::string::npos && !entry.is_symlink() && entry.is_regular_file()) names.push_back(name);
  }
  if (ec || names.empty())
    throw IOError("no fortune files in " + dir + " (install Debian's `fortunes` package: apt-get install fortunes)");
  std::sort(names.begin(), names.end());
  std::vector<uint8_t> bytes;
  for (const std::string& name : names) {
    std::ifstream in(fs::path(dir) / name, std::ios::binary);
    bytes.insert(bytes.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  Corpus c;
  bool seen[256] = {};
  for (uint8_t b : bytes) seen[b] = true;
  int64_t rank[256] = {};
  for (int b = 0; b < 256; ++b)
    if (seen[b]) rank[b] = static_cast<int64_t>(c.vocabulary.size()), c.vocabulary.push_back(static_cast<uint8_t>(b));
  c.ids.reserve(bytes.size());
  for (uint8_t b : bytes) c.ids.push_back(rank[b]);
  c.n_train = c.size() * 9 / 10;
  return c;
}

/// splitmix64: the batches' generator, the script's.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    state += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

/// Appends the window of `block` ids at `start` of `c` to x and, one id later, to y.
inline void append_window(const Corpus& c, int64_t start, int64_t block, std::vector<int64_t>& x, std::vector<int64_t>& y) {
  x.insert(x.end(), c.ids.begin() + start, c.ids.begin() + start + block);
  y.insert(y.end(), c.ids.begin() + start + 1, c.ids.begin() + start + block + 1);
}

/// One training batch: inputs and targets [batch, block] (int64) on `device`.
inline std::pair<Tensor, Tensor> training_batch(const Corpus& c, SplitMix64& rng, int64_t batch, int64_t block,
                                                Device device) {
  std::vector<int64_t> x, y;
  x.reserve(static_cast<size_t>(batch * block)), y.reserve(static_cast<size_t>(batch * block));
  for (int64_t r = 0; r < batch; ++r)
    append_window(c, static_cast<int64_t>(rng.next() % static_cast<uint64_t>(c.n_train - block)), block, x, y);
  return {tensor(x, {batch, block}).to(device), tensor(y, {batch, block}).to(device)};
}

/// Validation loss in nats per character: windows at 0, T, 2T, ... of the held-out part (at most
/// `windows`), in batches; each batch's summed cross entropy added up in double.
inline double validation_loss(CharLM& model, const Corpus& c, int64_t batch, int64_t windows, Device device) {
  const int64_t block = model->config.block_size;
  const int64_t val_size = c.size() - c.n_train;
  std::vector<int64_t> starts;
  for (int64_t s = 0; s + block + 1 <= val_size && static_cast<int64_t>(starts.size()) < windows; s += block) starts.push_back(s);
  NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  double total = 0;
  for (size_t first = 0; first < starts.size(); first += static_cast<size_t>(batch)) {
    const size_t last = std::min(starts.size(), first + static_cast<size_t>(batch));
    std::vector<int64_t> x, y;
    for (size_t w = first; w < last; ++w) append_window(c, c.n_train + starts[w], block, x, y);
    const auto rows = static_cast<int64_t>(last - first);
    const Tensor logits = model(tensor(x, {rows, block}).to(device));
    const Tensor loss = nn::functional::cross_entropy(logits.view({-1, c.vocabulary.empty() ? 1 : static_cast<int64_t>(c.vocabulary.size())}),
                                          tensor(y, Shape{rows * block}).to(device),
                                          nn::ClassLossOptions().reduction(nn::Reduction::Sum));
    total += static_cast<double>(loss.item<float>());
  }
  if (was_training) model->train();
  return starts.empty() ? 0.0 : total / static_cast<double>(starts.size() * static_cast<size_t>(block));
}

/// The learning rate of step `s` (0-based) of `steps`: linear warm-up over `warmup` steps, then
/// cosine decay to a tenth.
inline double lr_at(int64_t s, int64_t steps, int64_t warmup, double lr) {
  if (s < warmup) return lr * static_cast<double>(s + 1) / static_cast<double>(warmup);
  const double p = static_cast<double>(s - warmup) / static_cast<double>(std::max<int64_t>(1, steps - warmup));
  return lr * (0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * p)));
}

}  // namespace locus::cli
