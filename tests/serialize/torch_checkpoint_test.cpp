// Checkpoints of `locus train --model cnn` go both ways with PyTorch: a state_dict trained and
// saved by scripts/reference/torch_train_cnn.py (PyTorch 1.13, its own safetensors writer) loads
// into cli::make_cnn() and classifies the Fashion-MNIST test set as PyTorch does, on cpu and
// sim:0; and a state_dict Locus trained and saved loads strictly into the PyTorch model (same
// keys, order, dtypes and shapes, BatchNorm's running statistics and num_batches_tracked
// included) and classifies as Locus does. Both directions compare the accuracy and every logit.
//
// Needs /usr/bin/python3 with torch and the Fashion-MNIST files; skipped, saying which is missing,
// where either is absent (CI has no torch).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tests/serialize/torch_script.h"
#include "tools/locus/cnn.h"

namespace locus {
namespace {

namespace fs = std::filesystem;

constexpr const char* kScript = "scripts/reference/torch_train_cnn.py";
// The largest |Locus logit - PyTorch logit| allowed for the same weights and images: float32
// convolutions and matrix products summed in different orders differ by ~1e-5 on logits of
// magnitude ~10; 1e-3 leaves room without hiding a wrong weight, layout or statistic.
constexpr double kLogitTolerance = 1e-3;

// PyTorch's state_dict order for cnn.h's nn.Sequential: each module's parameters, then its
// buffers, modules in index order (Test A checks it against the file PyTorch writes).
const std::vector<std::string> kTorchKeys = {
    "0.weight", "0.bias",                                                              // Conv2d(1, 32)
    "1.weight", "1.bias", "1.running_mean", "1.running_var", "1.num_batches_tracked",  // BatchNorm2d(32)
    "4.weight", "4.bias",                                                              // Conv2d(32, 64)
    "5.weight", "5.bias", "5.running_mean", "5.running_var", "5.num_batches_tracked",  // BatchNorm2d(64)
    "9.weight", "9.bias",                                                              // Linear(3136, 128)
    "12.weight", "12.bias"};                                                           // Linear(128, 10)

fs::path script_path() { return testing::source_path(kScript); }

// Why the test cannot run here, or "" when it can.
std::string missing_prerequisite() {
  if (!testing::python_has_torch()) return std::string("needs PyTorch: `") + testing::kPython + " -c \"import torch\"` fails";
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    const fs::path raw = fs::path(data::kFashionMnistDir) / stem;
    if (!fs::exists(raw) && !fs::exists(raw.string() + ".gz"))
      return "needs Fashion-MNIST: " + raw.string() + "[.gz] is missing (Debian's dataset-fashion-mnist)";
  }
  return "";
}

#define REQUIRE_TORCH_AND_FASHION_MNIST() \
  if (const std::string why = missing_prerequisite(); !why.empty()) GTEST_SKIP() << why

using testing::kPython;
using testing::ScriptRun;
using testing::shell_quote;
using testing::TempDir;

// Runs the script with `args` (already quoted); its `accuracy` line is the run's value.
ScriptRun run_script(const std::string& args) { return testing::run_script(script_path(), args, "accuracy"); }

struct Evaluation {
  int64_t correct = 0;
  int64_t total = 0;
  Tensor logits;  // float32 [N, 10] on the cpu
  double accuracy() const { return static_cast<double>(correct) / static_cast<double>(total); }
};

// As `locus train` and the script evaluate: eval mode, no graph, batches of 1000, argmax. The
// model and the data go to `device` first.
Evaluation evaluate(const nn::Sequential& model, const data::TensorDataset& test, Device device) {
  NoGradGuard no_grad;
  model->to(device);
  model->eval();
  const Tensor images = cli::as_images(test.data()).to(device);
  const Tensor labels = test.targets().to(device);
  const int64_t n = test.size();
  Tensor correct = zeros({}, TensorOptions().dtype(kInt64).device(device));
  std::vector<Tensor> logits;
  for (int64_t i = 0; i < n; i += 1000) {
    const int64_t len = std::min<int64_t>(1000, n - i);
    const Tensor out = model(images.narrow(0, i, len));
    correct = add(correct, eq(argmax(out, 1), labels.narrow(0, i, len)).sum());
    logits.push_back(out.cpu());
  }
  return {correct.item<int64_t>(), n, cat(logits).contiguous()};
}

struct Comparison {
  double max_abs_diff = 0;
  int64_t flipped = 0;  // images whose argmax differs
  std::string report;
};

// Every logit of Locus against PyTorch's, and the images whose predicted class differs, each with
// PyTorch's margin between its class and Locus's (a flip is only excusable at a near tie).
Comparison compare_logits(const Tensor& locus_logits, const Tensor& torch_logits, const Tensor& labels) {
  Comparison c;
  std::ostringstream os;
  if (locus_logits.shape() != torch_logits.shape()) {
    c.max_abs_diff = INFINITY;
    os << "logits of shape " << locus_logits.shape() << " (Locus) and " << torch_logits.shape() << " (PyTorch)";
    c.report = os.str();
    return c;
  }
  const std::vector<float> a = locus_logits.to(kFloat32).contiguous().to_vector<float>();
  const std::vector<float> b = torch_logits.to(kFloat32).contiguous().to_vector<float>();
  const std::vector<int64_t> y = labels.cpu().contiguous().to_vector<int64_t>();
  const int64_t classes = locus_logits.size(1);
  int64_t worst = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double d = std::abs(static_cast<double>(a[k]) - static_cast<double>(b[k]));
    if (!(d <= c.max_abs_diff)) c.max_abs_diff = d, worst = static_cast<int64_t>(k);
  }
  os << "max |logit difference| " << c.max_abs_diff << " (image " << worst / classes << ", class " << worst % classes
     << ": Locus " << a[static_cast<size_t>(worst)] << ", PyTorch " << b[static_cast<size_t>(worst)] << ")";
  for (int64_t i = 0; i < locus_logits.size(0); ++i) {
    const float* la = a.data() + i * classes;
    const float* lb = b.data() + i * classes;
    const int64_t pa = std::max_element(la, la + classes) - la;  // the first maximum, as argmax
    const int64_t pb = std::max_element(lb, lb + classes) - lb;
    if (pa == pb) continue;
    if (++c.flipped <= 20)
      os << "\n  image " << i << " (label " << y[static_cast<size_t>(i)] << "): PyTorch predicts " << pb << ", Locus " << pa
         << "; PyTorch's margin " << (lb[pb] - lb[pa]) << ", Locus's " << (la[pa] - la[pb]);
  }
  os << "\n" << c.flipped << " of " << locus_logits.size(0) << " images predicted differently";
  c.report = os.str();
  return c;
}

std::vector<std::string> keys_of(const OrderedDict<std::string, Tensor>& dict) { return dict.keys(); }

// `model` evaluated on cpu and on sim:0 scores the accuracy of PyTorch's run, with logits within
// kLogitTolerance of the ones it wrote to `torch_logits_path`.
void expect_scores_as_torch(const nn::Sequential& model, const ScriptRun& torch_run, const std::string& torch_logits_path) {
  const Tensor torch_logits = load(torch_logits_path).at("logits");
  const auto test = data::load_mnist(data::kFashionMnistDir, false);
  for (const char* device : {"cpu", "sim:0"}) {
    SCOPED_TRACE(device);
    const Evaluation locus_eval = evaluate(model, *test, Device(device));
    const Comparison c = compare_logits(locus_eval.logits, torch_logits, test->targets());
    EXPECT_NEAR(locus_eval.accuracy(), torch_run.value, 1e-4)
        << "Locus on " << device << " scores " << locus_eval.correct << "/" << locus_eval.total << "\n"
        << c.report << "\n" << torch_run.output;
    EXPECT_LE(c.max_abs_diff, kLogitTolerance) << c.report << "\n" << torch_run.output;
  }
}

// PyTorch -> Locus: a state_dict PyTorch trained (100 Adam steps) and saved loads strictly into
// cli::make_cnn(), whose keys and order are the ones PyTorch wrote, and scores PyTorch's accuracy
// with the same logits on cpu and on sim:0.
TEST(TorchCheckpoint, APyTorchTrainedCnnScoresPyTorchsAccuracyInLocus) {
  REQUIRE_TORCH_AND_FASHION_MNIST();
  ASSERT_FALSE(script_path().empty()) << kScript << " not found from " << __FILE__ << " or " << fs::current_path();
  const TempDir dir;
  ASSERT_FALSE(dir.path().empty()) << "mkdtemp failed under " << ::testing::TempDir();
  const std::string weights = dir / "torch.safetensors", torch_logits_path = dir / "torch_logits.safetensors";
  const ScriptRun torch_run = run_script("--epochs 1 --max-steps 100 --save " + shell_quote(weights) + " --logits " +
                                         shell_quote(torch_logits_path));
  ASSERT_TRUE(torch_run.ok) << torch_run.output;
  ASSERT_GE(torch_run.value, 0) << "no `accuracy` line:\n" << torch_run.output;
  EXPECT_GT(torch_run.value, 0.5) << "100 steps should train the CNN well past chance:\n" << torch_run.output;

  const OrderedDict<std::string, Tensor> state = load(weights);
  EXPECT_EQ(keys_of(state), kTorchKeys) << "PyTorch's state_dict order, as the script wrote it";
  EXPECT_EQ(state.at("1.num_batches_tracked").dtype(), kInt64);
  EXPECT_EQ(state.at("1.num_batches_tracked").dim(), 0);
  EXPECT_EQ(state.at("1.num_batches_tracked").item<int64_t>(), 100);
  nn::Sequential model = cli::make_cnn();
  model->load_state_dict(state);  // strict: every key, nothing else, every shape
  expect_scores_as_torch(model, torch_run, torch_logits_path);
}

// Locus -> PyTorch: a CNN Locus trained (50 Adam steps, so that BatchNorm's running statistics
// and num_batches_tracked have moved) saves PyTorch's keys in PyTorch's order, and the PyTorch
// model loads the file strictly and scores Locus's accuracy with the same logits.
TEST(TorchCheckpoint, ALocusTrainedCnnScoresLocussAccuracyInPyTorch) {
  REQUIRE_TORCH_AND_FASHION_MNIST();
  ASSERT_FALSE(script_path().empty()) << kScript << " not found from " << __FILE__ << " or " << fs::current_path();
  const TempDir dir;
  ASSERT_FALSE(dir.path().empty()) << "mkdtemp failed under " << ::testing::TempDir();
  const std::string weights = dir / "locus.safetensors", torch_logits_path = dir / "torch_logits.safetensors";

  constexpr int64_t kSteps = 50, kBatch = 64;
  const auto train = data::load_mnist(data::kFashionMnistDir, true);
  manual_seed(0);
  nn::Sequential model = cli::make_cnn();
  model->train();
  optim::Adam opt(model->parameters(), 1e-3);
  for (int64_t step = 0; step < kSteps; ++step) {
    const Tensor x = cli::as_images(train->data().narrow(0, step * kBatch, kBatch));
    const Tensor y = train->targets().narrow(0, step * kBatch, kBatch);
    opt.zero_grad();
    const Tensor loss = nn::functional::cross_entropy(model(x), y);
    loss.backward();
    opt.step();
  }
  save(model->state_dict(), weights);

  const OrderedDict<std::string, Tensor> saved = load(weights);  // in the file's header order
  EXPECT_EQ(keys_of(saved), kTorchKeys);
  for (const char* bn : {"1", "5"}) {
    const Tensor tracked = saved.at(std::string(bn) + ".num_batches_tracked");
    EXPECT_EQ(tracked.dtype(), kInt64) << bn;
    EXPECT_EQ(tracked.dim(), 0) << bn;
    EXPECT_EQ(tracked.item<int64_t>(), kSteps) << bn;
    EXPECT_NE(saved.at(std::string(bn) + ".running_mean").abs().sum().item<float>(), 0.0f) << bn << ": stats never moved";
  }

  const ScriptRun torch_run =
      run_script("--load " + shell_quote(weights) + " --epochs 0 --logits " + shell_quote(torch_logits_path));
  ASSERT_TRUE(torch_run.ok) << torch_run.output;
  ASSERT_GE(torch_run.value, 0) << "no `accuracy` line:\n" << torch_run.output;
  expect_scores_as_torch(model, torch_run, torch_logits_path);
}

}  // namespace
}  // namespace locus
