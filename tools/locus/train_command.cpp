// `locus train`: the MLP 784-256-10 on Fashion-MNIST, on any device.

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "locus/locus.h"
#include "tools/locus/commands.h"
#include "tools/locus/mlp.h"

namespace locus::cli {
namespace {

struct TrainArgs {
  std::string data = data::kFashionMnistDir;
  std::string device = "auto";
  int epochs = 10;
  int64_t batch_size = 64;
  double lr = 1e-3;
  std::string optimizer = "adam";
  uint64_t seed = 0;
  int workers = 0;
  std::string save;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, std::vector<Tensor> params, double lr) {
  if (name == "sgd") return std::make_unique<optim::SGD>(std::move(params), optim::SGDOptions(lr).momentum(0.9));
  if (name == "adam") return std::make_unique<optim::Adam>(std::move(params), lr);
  if (name == "adamw") return std::make_unique<optim::AdamW>(std::move(params), lr);
  throw ValueError("--optimizer must be sgd, adam or adamw, not '" + name + "'");
}

// Fraction of correct predictions, in batches of 1000, without recording a graph.
double accuracy(nn::Module& model, const data::TensorDataset& test, Device device) {
  NoGradGuard no_grad;
  model.eval();
  data::DataLoader loader(std::make_shared<data::TensorDataset>(test), data::DataLoaderOptions(1000).device(device));
  Tensor correct = zeros({}, TensorOptions().dtype(kInt64).device(device));
  for (const data::Example& b : loader) correct = add(correct, eq(argmax(model(b.data), 1), b.target).sum());
  model.train();
  return static_cast<double>(correct.item<int64_t>()) / static_cast<double>(test.size());
}

void progress(int epoch, int epochs, int64_t seen, int64_t total, double loss, double rate) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * seen / std::max<int64_t>(total, 1));
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < kWidth) bar += '>' + std::string(static_cast<size_t>(kWidth - filled - 1), ' ');
  std::fprintf(stderr, "\repoch %d/%d [%s] %6lld/%lld  loss %.4f  %8.0f samples/s", epoch, epochs, bar.c_str(),
               static_cast<long long>(seen), static_cast<long long>(total), loss, rate);
  std::fflush(stderr);
}

void run_train(const TrainArgs& a) {
  const Device device = a.device == "auto" ? best_device() : Device(a.device);
  const Device where = empty({0}, device).device();  // the concrete device: cuda -> cuda:0
  std::printf("locus train: MLP 784-256-10 on %s, %d epochs, batch %lld, %s lr %g, seed %llu\n", where.str().c_str(),
              a.epochs, static_cast<long long>(a.batch_size), a.optimizer.c_str(), a.lr,
              static_cast<unsigned long long>(a.seed));
  const auto train_set = data::load_mnist(a.data, true);
  const auto test_set = data::load_mnist(a.data, false);
  manual_seed(a.seed);
  auto model = make_mlp();
  model->to(where);  // once, at startup
  auto opt = make_optimizer(a.optimizer, model->parameters(), a.lr);
  data::DataLoader loader(train_set, data::DataLoaderOptions(a.batch_size)
                                        .shuffle(true)
                                        .seed(a.seed)
                                        .num_workers(a.workers)
                                        .pin_memory(where.is_cuda())
                                        .device(where));
  double total_time = 0, acc = 0;
  for (int epoch = 1; epoch <= a.epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    auto last_print = t0;
    int64_t seen = 0;
    double shown_loss = 0;
    for (const data::Example& batch : loader) {
      opt->zero_grad();
      const Tensor loss = nn::cross_entropy(model(batch.data), batch.target);
      loss.backward();
      opt->step();
      seen += batch.data.size(0);
      const auto now = std::chrono::steady_clock::now();
      if (std::chrono::duration<double>(now - last_print).count() > 0.2 || seen == train_set->size()) {
        shown_loss = loss.item<float>();  // .item() brings the scalar back to the host
        progress(epoch, a.epochs, seen, train_set->size(), shown_loss, static_cast<double>(seen) / seconds_since(t0));
        last_print = now;
      }
    }
    const double dt = seconds_since(t0);
    total_time += dt;
    acc = accuracy(*model, *test_set, where);
    std::fprintf(stderr, "\n");
    std::printf("epoch %d: loss %.4f, test accuracy %.2f%%, %.2f s (%.0f samples/s)\n", epoch, shown_loss, 100 * acc, dt,
                static_cast<double>(seen) / dt);
    std::fflush(stdout);
  }
  std::printf("test accuracy: %.2f%%\ntime per epoch: %.2f s on %s\n", 100 * acc, total_time / std::max(a.epochs, 1),
              where.str().c_str());
  if (!a.save.empty()) {
    save(model->state_dict(), a.save);
    std::printf("saved the model to %s\n", a.save.c_str());
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "Train the MLP 784-256-10 on Fashion-MNIST");
  cmd->add_option("--data", args->data, "directory with the (Fashion-)MNIST IDX files")->capture_default_str();
  cmd->add_option("--device", args->device, "auto, cpu, cuda[:N] or sim[:N]")->capture_default_str();
  cmd->add_option("--epochs", args->epochs, "passes over the training set")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--batch-size", args->batch_size, "examples per step")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--lr", args->lr, "learning rate")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--optimizer", args->optimizer, "sgd (momentum 0.9), adam or adamw")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}));
  cmd->add_option("--seed", args->seed, "seed of the initial weights and of the shuffling")->capture_default_str();
  cmd->add_option("--workers", args->workers, "data loader threads")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--save", args->save, "write the trained weights here (safetensors)");
  cmd->callback([args] { run_train(*args); });
}

}  // namespace locus::cli
