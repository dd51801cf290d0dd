// Checkpoints of `locus charlm` go both ways with PyTorch: a state_dict trained and saved by
// scripts/reference/torch_char_lm.py (PyTorch 1.13) loads into cli::CharLM and gives the
// validation loss PyTorch printed, to 1e-4; and a state_dict Locus trained and saved loads
// strictly into the PyTorch model and gives Locus's validation loss, to 1e-4. A small model of
// the same architecture (2 layers, d_model 32), so that the test takes seconds.
//
// Needs /usr/bin/python3 with torch and the fortune files; skipped, saying which is missing,
// where either is absent (CI has no torch).

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "locus/locus.h"
#include "tests/serialize/torch_script.h"
#include "tools/locus/char_lm.h"

namespace locus {
namespace {

namespace fs = std::filesystem;
using testing::shell_quote;

constexpr const char* kScript = "scripts/reference/torch_char_lm.py";
// The sizes both sides build, as the script's flags and as a CharLMConfig.
constexpr const char* kSizes = "--layers 2 --d-model 32 --heads 2 --ff 64 --block-size 32 --batch-size 16 --val-windows 64";
constexpr int64_t kBatch = 16, kWindows = 64;
// float32 sums of the same products in different orders: ~1e-6 on a loss of ~3.
constexpr double kLossTolerance = 1e-4;

cli::CharLMConfig small_config(int64_t vocab) {
  cli::CharLMConfig c;
  c.vocab = vocab, c.block_size = 32, c.d_model = 32, c.heads = 2, c.layers = 2, c.ff = 64;
  return c;
}

std::string missing_prerequisite() {
  if (!testing::python_has_torch())
    return std::string("needs PyTorch: `") + testing::kPython + " -c \"import torch\"` fails";
  if (!fs::exists(fs::path(cli::kFortunesDir) / "fortunes")) return std::string("needs Debian's fortunes in ") + cli::kFortunesDir;
  if (testing::source_path(kScript).empty()) return std::string(kScript) + " not found";
  return "";
}

#define REQUIRE_TORCH_AND_FORTUNES() \
  if (const std::string why = missing_prerequisite(); !why.empty()) GTEST_SKIP() << why

TEST(TorchCharLM, APyTorchCheckpointGivesPyTorchsValidationLoss) {
  REQUIRE_TORCH_AND_FORTUNES();
  const testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string weights = dir / "torch.safetensors";
  const testing::ScriptRun torch_run = testing::run_script(
      testing::source_path(kScript),
      std::string(kSizes) + " --steps 40 --eval-every 40 --sample 0 --threads 1 --save " + shell_quote(weights), "val_loss");
  ASSERT_TRUE(torch_run.ok) << torch_run.output;
  ASSERT_GT(torch_run.value, 0) << torch_run.output;
  const cli::Corpus corpus = cli::load_corpus(cli::kFortunesDir);
  cli::CharLM model(small_config(static_cast<int64_t>(corpus.vocabulary.size())));
  const auto state = load(weights);
  std::vector<std::string> keys;
  for (const auto& [name, t] : model->state_dict()) keys.push_back(name);
  std::vector<std::string> file_keys;
  for (const auto& [name, t] : state) file_keys.push_back(name);
  EXPECT_EQ(keys, file_keys);  // PyTorch's names, in PyTorch's order
  model->load_state_dict(state);
  for (const char* device : {"cpu", "sim:0"}) {
    model->to(Device(device));
    EXPECT_NEAR(cli::validation_loss(model, corpus, kBatch, kWindows, Device(device)), torch_run.value, kLossTolerance)
        << device << "\n" << torch_run.output;
  }
  model->to(Device("cpu"));
}

TEST(TorchCharLM, ALocusCheckpointGivesLocussValidationLossInPyTorch) {
  REQUIRE_TORCH_AND_FORTUNES();
  const testing::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string weights = dir / "locus.safetensors";
  const cli::Corpus corpus = cli::load_corpus(cli::kFortunesDir);
  manual_seed(1);
  cli::CharLM model(small_config(static_cast<int64_t>(corpus.vocabulary.size())));
  optim::AdamW opt(model->parameters(), optim::AdamW::with_default_decay().lr(3e-3));
  cli::SplitMix64 rng{1};
  for (int step = 0; step < 30; ++step) {
    const auto [x, y] = cli::training_batch(corpus, rng, kBatch, 32, Device("cpu"));
    opt.zero_grad();
    nn::functional::cross_entropy(model(x).view({-1, model->config.vocab}), y.view({-1})).backward();
    opt.step();
  }
  const double locus_loss = cli::validation_loss(model, corpus, kBatch, kWindows, Device("cpu"));
  save(model->state_dict(), weights);
  const testing::ScriptRun torch_run = testing::run_script(
      testing::source_path(kScript), std::string(kSizes) + " --steps 0 --sample 0 --threads 1 --load " + shell_quote(weights),
      "val_loss");
  ASSERT_TRUE(torch_run.ok) << torch_run.output;
  EXPECT_NEAR(torch_run.value, locus_loss, kLossTolerance) << torch_run.output;
  EXPECT_LT(locus_loss, 4.0) << "30 steps should have moved the loss below log(vocab)";
}

}  // namespace
}  // namespace locus
