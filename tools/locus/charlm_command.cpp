// `locus charlm`: the character-level language model of char_lm.h trained on the fortune files
// with torch_char_lm.py's recipe (AdamW, warm-up then cosine decay, gradient clipping at 1),
// printing the validation loss as it goes and a sample at the end; --save and --load take
// safetensors checkpoints that go both ways with the PyTorch script.

#include <chrono>
#include <cstdio>
#include <memory>
#include <numbers>
#include <string>

#include "locus/locus.h"
#include "tools/locus/char_lm.h"
#include "tools/locus/commands.h"
#include "tools/locus/option_checks.h"

namespace locus::cli {
namespace {

struct CharLMArgs {
  std::string data = kFortunesDir;
  std::string device = "auto";
  int64_t steps = 600, batch_size = 32, warmup = 100, eval_every = 200, val_windows = 256, sample = 200;
  double lr = 1e-3;
  uint64_t seed = 0;
  CharLMConfig model;
  std::string save, load;
  std::string amp = "none";
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `count` characters drawn from the model, starting from "\n" (token 0 without one).
std::string sample_text(CharLM& model, const Corpus& c, int64_t count, uint64_t seed, Device device) {
  NoGradGuard no_grad;
  model->eval();
  const auto newline = std::find(c.vocabulary.begin(), c.vocabulary.end(), uint8_t{'\n'});
  std::vector<int64_t> ids{newline == c.vocabulary.end() ? 0 : newline - c.vocabulary.begin()};
  manual_seed(seed);
  std::string text;
  for (int64_t n = 0; n < count; ++n) {
    const int64_t t = std::min<int64_t>(static_cast<int64_t>(ids.size()), model->config.block_size);
    const std::vector<int64_t> context(ids.end() - t, ids.end());
    const Tensor logits = model(tensor(context, {1, t}).to(device)).select(1, t - 1);
    const int64_t next = multinomial(softmax(logits.to(kFloat32), -1), 1).item<int64_t>();
    ids.push_back(next);
    text.push_back(static_cast<char>(c.vocabulary[static_cast<size_t>(next)]));
  }
  return text;
}

void run_charlm(const CharLMArgs& a) {
  const Device device = a.device == "auto" ? best_device() : Device(a.device);
  std::optional<DType> lower;
  if (a.amp == "bf16") lower = kBFloat16;
  if (lower) amp::check_autocast_support(device.type(), *lower);
  const Corpus corpus = load_corpus(a.data);
  CharLMConfig config = a.model;
  config.vocab = static_cast<int64_t>(corpus.vocabulary.size());
  if (corpus.n_train <= config.block_size + 1)
    throw ValueError("the corpus is too small for --block-size " + std::to_string(config.block_size));
  manual_seed(a.seed);
  CharLM model(config);
  if (!a.load.empty()) model->load_state_dict(load(a.load));
  model->to(device);
  int64_t parameters = 0;
  for (const Tensor& p : model->parameters()) parameters += p.numel();
  std::printf("locus charlm: %lld layers, d_model %lld, %lld heads on %s; corpus %lld bytes, n_train %lld, vocab %lld, "
              "parameters %lld\n",
              static_cast<long long>(config.layers), static_cast<long long>(config.d_model),
              static_cast<long long>(config.heads), device.str().c_str(), static_cast<long long>(corpus.size()),
              static_cast<long long>(corpus.n_train), static_cast<long long>(config.vocab), static_cast<long long>(parameters));
  std::fflush(stdout);
  optim::AdamW opt(model->parameters(), optim::AdamW::with_default_decay().lr(a.lr));
  SplitMix64 rng{a.seed};
  double trained = 0, val = 0;
  bool evaluated = false;
  for (int64_t s = 0; s < a.steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    model->train();
    const auto [x, y] = training_batch(corpus, rng, a.batch_size, config.block_size, device);
    Tensor loss;
    {
      const amp::AutocastGuard autocast(device.type(), lower, lower.has_value());
      loss = nn::functional::cross_entropy(model(x).view({-1, config.vocab}), y.view({-1}));
    }
    opt.zero_grad();
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    for (auto& group : opt.param_groups()) group.options().set_lr(lr_at(s, a.steps, a.warmup, a.lr));
    opt.step();
    const double train_loss = loss.item<float>();
    trained += seconds_since(t0);
    evaluated = (s + 1) % a.eval_every == 0 || s + 1 == a.steps;
    if (evaluated) {
      val = validation_loss(model, corpus, a.batch_size, a.val_windows, device);
      std::printf("step %lld: train loss %.4f, val loss %.4f (%.4f bits/char), %.2f s\n", static_cast<long long>(s + 1),
                  train_loss, val, val / std::numbers::ln2, trained);
      std::fflush(stdout);
    }
  }
  if (!evaluated) val = validation_loss(model, corpus, a.batch_size, a.val_windows, device);
  if (a.steps > 0) std::printf("time per step: %.3f s\n", trained / static_cast<double>(a.steps));
  if (!a.save.empty()) {
    save(model->state_dict(), a.save);
    std::printf("saved the model to %s\n", a.save.c_str());
  }
  if (a.sample > 0) std::printf("sample:\n%s\n", sample_text(model, corpus, a.sample, a.seed, device).c_str());
  std::printf("val_loss %.6f\n", val);
}

}  // namespace

void add_charlm_command(CLI::App& app) {
  auto args = std::make_shared<CharLMArgs>();
  CLI::App* cmd = app.add_subcommand(
      "charlm", "Train a character-level transformer language model on the fortune files (scripts/reference/torch_char_lm.py's recipe)");
  // Every option is checked before anything runs (Note [Option checks]).
  cmd->add_option("--data", args->data, "directory of the fortune files")
      ->capture_default_str()
      ->check(existing_directory("install Debian's fortunes package, or pass a directory of plain-text files without '.' in their names"));
  cmd->add_option("--device", args->device, "auto, cpu, cuda[:N] or sim[:N]")->capture_default_str()->check(device_on_this_machine());
  cmd->add_option("--steps", args->steps, "optimizer steps (0: only evaluate)")->capture_default_str()->transform(integer_in(0, 100000000));
  cmd->add_option("--batch-size", args->batch_size, "sequences per step")->capture_default_str()->transform(integer_in(1, 1000000));
  cmd->add_option("--block-size", args->model.block_size, "characters per sequence (the context)")
      ->capture_default_str()
      ->transform(integer_in(1, 1000000));
  cmd->add_option("--d-model", args->model.d_model, "model width")->capture_default_str()->transform(integer_in(1, 65536));
  cmd->add_option("--heads", args->model.heads, "attention heads (divides --d-model)")->capture_default_str()->transform(integer_in(1, 4096));
  cmd->add_option("--layers", args->model.layers, "encoder layers")->capture_default_str()->transform(integer_in(1, 1024));
  cmd->add_option("--ff", args->model.ff, "feed-forward width")->capture_default_str()->transform(integer_in(1, 1000000));
  cmd->add_option("--dropout", args->model.dropout, "dropout probability")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--lr", args->lr, "peak learning rate (AdamW, weight decay 0.01)")->capture_default_str()->check(positive_number("0.001"));
  cmd->add_option("--warmup", args->warmup, "linear warm-up steps, then cosine decay to a tenth")
      ->capture_default_str()
      ->transform(integer_in(1, 100000000));
  cmd->add_option("--eval-every", args->eval_every, "steps between validation losses")
      ->capture_default_str()
      ->transform(integer_in(1, 100000000));
  cmd->add_option("--val-windows", args->val_windows, "held-out windows in the validation loss")
      ->capture_default_str()
      ->transform(integer_in(1, 100000000));
  cmd->add_option("--sample", args->sample, "characters to sample at the end (0: none)")->capture_default_str()->transform(integer_in(0, 1000000));
  cmd->add_option("--seed", args->seed, "seed of the weights, the batches, dropout and sampling")
      ->capture_default_str()
      ->transform(unsigned_integer());
  cmd->add_option("--save", args->save, "write the trained weights here (safetensors)")->check(writable_file());
  cmd->add_option("--load", args->load, "start from these weights (safetensors, e.g. from torch_char_lm.py --save)")->check(CLI::ExistingFile);
  cmd->add_option("--amp", args->amp, "mixed precision: none or bf16 (autocast)")->capture_default_str()->check(one_of({"none", "bf16"}));
  cmd->callback([args] { run_charlm(*args); });
}

}  // namespace locus::cli
