// `locus train`: the MLP 784-256-10 (or, with --model cnn, the CNN of cnn.h) on Fashion-MNIST, on any device, in one process or, as a
// rank of `locus run` (or with --nproc N, which launches itself that way), with
// DistributedDataParallel: --batch-size is then the global batch, split evenly over the ranks,
// so the same flags train the same model whatever the number of processes; rank 0 alone
// evaluates, reports and saves.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tools/locus/cnn.h"
#include "tools/locus/commands.h"
#include "tools/locus/mlp.h"
#include "tools/locus/option_checks.h"
#include "tools/locus/run_launcher.h"

namespace locus::cli {
namespace {

// The bounds of the options: far beyond any sensible run, small enough to be plain numbers.
constexpr int kMaxEpochs = 100000;
constexpr int64_t kMaxBatch = 1000000;
constexpr int kMaxWorkers = 256;

struct TrainArgs {
  std::string model = "mlp";  // mlp or cnn
  std::string data = data::kFashionMnistDir;
  std::string device = "auto";
  std::optional<int> epochs;  // the model's default when not given: 10 (mlp), 5 (cnn)
  int64_t batch_size = 64;
  double lr = 1e-3;
  std::string optimizer = "adam";
  std::optional<std::string> scheduler;  // none, cosine, cosine-per-step or step; the model's default: none (mlp), cosine-per-step (cnn)
  std::optional<double> weight_decay;  // the optimizer's own default when not given
  uint64_t seed = 0;
  int workers = 0;
  std::string save;
  int nproc = 1;
  std::string amp = "none";  // none, bf16 or fp16
  std::string shard = "none";  // none (DDP), full, grad or optim
};

bool is_cnn(const TrainArgs& a) { return a.model == "cnn"; }
int epochs_of(const TrainArgs& a) { return a.epochs.value_or(is_cnn(a) ? 5 : 10); }
std::string scheduler_of(const TrainArgs& a) { return a.scheduler.value_or(is_cnn(a) ? "cosine-per-step" : "none"); }

// The autocast dtype --amp asks for, if any.
std::optional<DType> amp_dtype(const std::string& amp) {
  if (amp == "none") return std::nullopt;
  if (amp == "bf16") return kBFloat16;
  if (amp == "fp16") return kFloat16;
  throw ValueError("--amp must be none, bf16 or fp16, not '" + amp + "'");
}

// Autocast for one forward pass when --amp asks for it (a guard that does nothing otherwise).
amp::AutocastGuard autocast_for(Device where, std::optional<DType> dtype) {
  return amp::AutocastGuard(where.type(), dtype, dtype.has_value());
}

// Where this process stands in a distributed run: a rank of `locus run`, or the only process.
struct Ranks {
  bool distributed = false;
  int rank = 0, size = 1, local_rank = 0;
  bool reports() const { return rank == 0; }
};

Ranks ranks_from_launcher() {
  Ranks r;
  if (!std::getenv("LOCUS_STORE") || !std::getenv("WORLD_SIZE")) return r;
  r.distributed = true;
  r.rank = std::atoi(std::getenv("RANK") ? std::getenv("RANK") : "0");
  r.size = std::atoi(std::getenv("WORLD_SIZE"));
  r.local_rank = distributed::get_local_rank();
  return r;
}

// The rank's device: a distributed run on CUDA puts rank r of a node on cuda:LOCAL_RANK, whatever
// --device says ("auto", "cuda" and "cuda:0" alike), since two ranks on one GPU cannot share an
// NCCL group; an explicit other index is honoured only for a node of one rank.
Device rank_device(const TrainArgs& a, const Ranks& r) {
  const Device chosen = a.device == "auto" ? best_device() : Device(a.device);
  if (!r.distributed || !chosen.is_cuda()) return empty({0}, chosen).device();  // the concrete device: cuda -> cuda:0
  const char* local_world = std::getenv("LOCAL_WORLD_SIZE");
  if (chosen.has_index() && a.device != "auto" && (!local_world || std::atoi(local_world) <= 1)) return chosen;
  const int count = cuda::device_count();
  if (r.local_rank >= count)
    throw ValueError("rank " + std::to_string(r.rank) + " has LOCAL_RANK " + std::to_string(r.local_rank) + " but this machine has " +
                     std::to_string(count) + " CUDA devices: start at most that many ranks per node");
  return Device(DeviceType::CUDA, r.local_rank);
}

void check_global_batch(int64_t batch, int ranks) {
  if (batch % ranks != 0)
    throw ValueError("--batch-size " + std::to_string(batch) + " (the global batch) does not split evenly over " +
                     std::to_string(ranks) + " ranks");
}

std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// `locus train --nproc N` is `locus run --nproc-per-node N locus train` with the same flags.
void relaunch(const TrainArgs& a) {
  std::vector<std::string> command = {std::filesystem::read_symlink("/proc/self/exe").string(), "train", "--model", a.model,
                                      "--data", a.data, "--device", a.device,
                                      "--epochs", std::to_string(epochs_of(a)), "--batch-size", std::to_string(a.batch_size),
                                      "--lr", exact(a.lr), "--optimizer", a.optimizer,
                                      "--seed", std::to_string(a.seed), "--workers", std::to_string(a.workers),
                                      "--amp", a.amp, "--scheduler", scheduler_of(a)};
  if (a.weight_decay) command.insert(command.end(), {"--weight-decay", exact(*a.weight_decay)});
  if (!a.save.empty()) command.insert(command.end(), {"--save", a.save});
  command.insert(command.end(), {"--shard", a.shard});
  run_ranks_on_this_node(a.nproc, command);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --weight-decay, when given, replaces the optimizer's default (AdamW's 0.01, else 0).
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainArgs& a, std::vector<Tensor> params) {
  if (a.optimizer == "sgd") {
    optim::SGDOptions o = optim::SGDOptions(a.lr).momentum(0.9);
    if (a.weight_decay) o.weight_decay(*a.weight_decay);
    return std::make_unique<optim::SGD>(std::move(params), o);
  }
  if (a.optimizer == "adam" || a.optimizer == "adamw") {
    optim::AdamOptions o = (a.optimizer == "adamw" ? optim::AdamW::with_default_decay() : optim::AdamOptions()).lr(a.lr);
    if (a.weight_decay) o.weight_decay(*a.weight_decay);
    if (a.optimizer == "adamw") return std::make_unique<optim::AdamW>(std::move(params), o);
    return std::make_unique<optim::Adam>(std::move(params), o);
  }
  throw ValueError("--optimizer must be sgd, adam or adamw, not '" + a.optimizer + "'");
}

// The schedule --scheduler asks for: cosine anneals to 0 over the run (stepped per epoch, or
// per step with cosine-per-step), step divides the rate by 10 after each third of it; none
// keeps the rate.
std::unique_ptr<optim::lr_scheduler::LRScheduler> make_scheduler(const TrainArgs& a, optim::Optimizer& opt,
                                                                 int64_t steps_per_epoch) {
  const std::string s = scheduler_of(a);
  const int epochs = epochs_of(a);
  if (s == "none") return nullptr;
  if (s == "cosine") return std::make_unique<optim::lr_scheduler::CosineAnnealingLR>(opt, epochs);
  if (s == "cosine-per-step")
    return std::make_unique<optim::lr_scheduler::CosineAnnealingLR>(opt, epochs * steps_per_epoch);
  if (s == "step") return std::make_unique<optim::lr_scheduler::StepLR>(opt, std::max(1, epochs / 3), 0.1);
  throw ValueError("--scheduler must be cosine, cosine-per-step, step or none, not '" + s + "'");
}

// The model --model names, and what it takes: the loader's [N, 784] rows, or them as images.
nn::Sequential make_model(const TrainArgs& a) { return is_cnn(a) ? make_cnn() : make_mlp(); }
Tensor model_input(const TrainArgs& a, const Tensor& rows) { return is_cnn(a) ? as_images(rows) : rows; }

// Fraction of correct predictions, in batches of 1000, without recording a graph.
double accuracy(const TrainArgs& a, nn::Module& model, const data::TensorDataset& test, Device device,
                std::optional<DType> lower) {
  NoGradGuard no_grad;
  const amp::AutocastGuard autocast = autocast_for(device, lower);
  model.eval();
  data::DataLoader loader(std::make_shared<data::TensorDataset>(test), data::DataLoaderOptions(1000).device(device));
  Tensor correct = zeros({}, TensorOptions().dtype(kInt64).device(device));
  for (const data::Example<>& b : loader) correct = add(correct, eq(argmax(model(model_input(a, b.data)), 1), b.target).sum());
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

// How --shard reads in the header line.
std::string sharding_label(const std::string& shard) {
  if (shard == "full") return "fully sharded (parameters, gradients, optimizer state)";
  if (shard == "grad") return "gradients and optimizer state sharded";
  return "optimizer state sharded";
}

// --shard: every layer with parameters is a unit of its own, then the model (Note [Sharded units]).
void shard_layers(nn::Sequential& model, const std::shared_ptr<distributed::ProcessGroup>& group, const std::string& shard) {
  const auto strategy = shard == "full"   ? distributed::ShardingStrategy::FullShard
                        : shard == "grad" ? distributed::ShardingStrategy::ShardGradOp
                                          : distributed::ShardingStrategy::ShardOptimizerState;
  const auto options = distributed::FullyShardOptions().strategy(strategy);
  for (size_t i = 0; i < model->size(); ++i)
    if (!model[i]->parameters().empty()) distributed::fully_shard(model[i], group, options);
  distributed::fully_shard(model, group, options);
}

void run_train(const TrainArgs& a) {
  if (a.nproc > 1) {
    if (std::getenv("LOCUS_STORE")) throw ValueError("--nproc inside `locus run`: give the number of processes to one of them");
    check_global_batch(a.batch_size, a.nproc);  // once, before any rank starts
    relaunch(a);
    return;
  }
  const Ranks ranks = ranks_from_launcher();
  const Device where = rank_device(a, ranks);
  const std::optional<DType> lower = amp_dtype(a.amp);
  if (lower) amp::check_autocast_support(where.type(), *lower);  // before any data is read
  // float16 gradients need loss scaling; bfloat16 has float32's range and needs none.
  amp::GradScaler scaler(amp::GradScalerOptions().enabled(lower == kFloat16));
  check_global_batch(a.batch_size, ranks.size);
  const int64_t rank_batch = a.batch_size / ranks.size;
  if (a.shard != "none" && !ranks.distributed)
    throw ValueError("--shard " + a.shard + " shards over several processes: add --nproc N (or run under `locus run`)");
  const bool sharded = a.shard != "none";
  std::shared_ptr<distributed::ProcessGroup> group;
  if (ranks.distributed) {
    const std::string backend =
        where.is_cuda() && distributed::is_available("nccl") ? "nccl" : distributed::launcher_backend();
    group = distributed::new_group(backend, distributed::GroupOptions().device(where.is_cuda() ? where.index() : -1));
  }
  if (ranks.reports()) {
    std::string extras;  // what differs from the defaults, so that a default run's header stays as it was
    if (a.weight_decay) {
      char wd[32];
      std::snprintf(wd, sizeof wd, ", weight decay %g", *a.weight_decay);
      extras += wd;
    }
    if (scheduler_of(a) != "none") extras += ", " + scheduler_of(a) + " schedule";
    std::printf("locus train: %s on %s, %d epochs, batch %lld, %s lr %g%s, seed %llu%s\n",
                is_cnn(a) ? "CNN (2 conv-BN-ReLU-pool stages, 3136-128-10)" : "MLP 784-256-10", where.str().c_str(), epochs_of(a), static_cast<long long>(a.batch_size), a.optimizer.c_str(), a.lr, extras.c_str(),
                static_cast<unsigned long long>(a.seed),
                lower ? (", autocast " + a.amp + (scaler.enabled() ? " with GradScaler" : "")).c_str() : "");
    if (group)
      std::printf("distributed: %d ranks over %s, %lld examples per rank and step%s\n", ranks.size, group->backend().c_str(),
                  static_cast<long long>(rank_batch), sharded ? (", " + sharding_label(a.shard)).c_str() : "");
  }
  const auto train_set = data::load_mnist(a.data, true);
  const auto test_set = data::load_mnist(a.data, false);
  manual_seed(a.seed);
  auto model = make_model(a);
  model->to(where);  // once, at startup
  std::optional<nn::DistributedDataParallel> ddp;
  // Every rank starts from rank 0's weights, either way.
  if (sharded) shard_layers(model, group, a.shard);
  else if (group) ddp.emplace(model, group);
  auto opt = make_optimizer(a, model->parameters());
  auto options = data::DataLoaderOptions(rank_batch).workers(a.workers).pin_memory(where.is_cuda()).device(where);
  std::shared_ptr<data::DistributedSampler> sampler;
  if (group) {
    sampler = std::make_shared<data::DistributedSampler>(data::DistributedSamplerOptions(ranks.size, ranks.rank).seed(a.seed));
    options.sampler(sampler);
  } else {
    options.shuffle(true).seed(a.seed);
  }
  data::DataLoader loader(train_set, options);
  const int64_t steps_per_epoch = (train_set->size() / ranks.size + rank_batch - 1) / rank_batch;
  auto scheduler = make_scheduler(a, *opt, steps_per_epoch);
  const bool per_step = scheduler_of(a) == "cosine-per-step";
  const int epochs = epochs_of(a);
  double total_time = 0, acc = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    if (sampler) sampler->set_epoch(static_cast<uint64_t>(epoch));
    const double epoch_lr = opt->param_groups().front().options().get_lr();  // what this epoch trains with
    const auto t0 = std::chrono::steady_clock::now();
    auto last_print = t0;
    int64_t seen = 0;
    double shown_loss = 0;
    for (const data::Example<>& batch : loader) {
      opt->zero_grad();
      Tensor loss;
      {
        const amp::AutocastGuard autocast = autocast_for(where, lower);
        const Tensor input = model_input(a, batch.data);
        loss = nn::functional::cross_entropy(ddp ? (*ddp)(input) : model(input), batch.target);
      }
      scaler.scale(loss).backward();  // the loss itself when the scaler is off
      scaler.step(*opt);
      scaler.update();
      if (scheduler && per_step) scheduler->step();
      seen = std::min(seen + batch.data.size(0) * ranks.size, train_set->size());
      const auto now = std::chrono::steady_clock::now();
      if (ranks.reports() &&
          (std::chrono::duration<double>(now - last_print).count() > 0.2 || seen == train_set->size())) {
        shown_loss = loss.item<float>();  // .item() brings the scalar back to the host
        progress(epoch, epochs, seen, train_set->size(), shown_loss, static_cast<double>(seen) / seconds_since(t0));
        last_print = now;
      }
    }
    const double dt = seconds_since(t0);
    total_time += dt;
    if (scheduler && !per_step) scheduler->step();  // every rank, so that the rates stay equal
    // A sharded model's forward is a collective: every rank evaluates, rank 0 reports.
    if (sharded || ranks.reports()) acc = accuracy(a, *model, *test_set, where, lower);
    if (!ranks.reports()) continue;
    std::fprintf(stderr, "\n");
    std::printf("epoch %d: lr %g, loss %.4f, test accuracy %.2f%%, %.2f s (%.0f samples/s)\n", epoch, epoch_lr, shown_loss,
                100 * acc, dt, static_cast<double>(train_set->size()) / dt);
    std::fflush(stdout);
  }
  // The whole weights, in the unsharded model's names, gathered on rank 0 (a collective).
  const OrderedDict<std::string, Tensor> weights =
      sharded && !a.save.empty()
          ? distributed::get_model_state_dict(*model, distributed::StateDictOptions().full_state_dict(true).cpu_offload(true))
          : OrderedDict<std::string, Tensor>();
  if (ranks.reports()) {
    std::printf("test accuracy: %.2f%%\ntime per epoch: %.2f s on %s\n", 100 * acc, total_time / std::max(epochs, 1),
                (group ? std::to_string(ranks.size) + " ranks of " + where.str() : where.str()).c_str());
    if (!a.save.empty()) {
      save(sharded ? weights : model->state_dict(), a.save);
      std::printf("saved the model to %s\n", a.save.c_str());
    }
  }
  if (group) group->barrier()->wait();  // the others wait for rank 0's evaluation and save
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "Train the MLP 784-256-10 (or a CNN) on Fashion-MNIST");
  // Every option is checked before anything runs (Note [Option checks]).
  cmd->add_option("--model", args->model, "mlp (784-256-10) or cnn (two conv-BN-ReLU-pool stages, 3136-128-10)")
      ->capture_default_str()
      ->check(one_of({"mlp", "cnn"}));
  cmd->add_option("--data", args->data, "directory with the (Fashion-)MNIST IDX files")
      ->capture_default_str()
      ->check(existing_directory("install Debian's dataset-fashion-mnist, or pass the directory that holds the "
                                 "MNIST files"));
  cmd->add_option("--device", args->device, "auto, cpu, cuda[:N] or sim[:N]")
      ->capture_default_str()
      ->check(device_on_this_machine());
  cmd->add_option("--epochs", args->epochs, "passes over the training set (default: 10 for mlp, 5 for cnn)")
      ->transform(integer_in(1, kMaxEpochs));
  cmd->add_option("--batch-size", args->batch_size, "examples per step")
      ->capture_default_str()
      ->transform(integer_in(1, kMaxBatch));
  cmd->add_option("--lr", args->lr, "learning rate")->capture_default_str()->check(positive_number("0.001"));
  cmd->add_option("--optimizer", args->optimizer, "sgd (momentum 0.9), adam or adamw")
      ->capture_default_str()
      ->check(one_of({"sgd", "adam", "adamw"}));
  cmd->add_option("--weight-decay", args->weight_decay,
                  "weight decay (L2 for sgd and adam, decoupled for adamw; default: the optimizer's, 0.01 for adamw)")
      ->check(non_negative_number("0.01"));
  cmd->add_option("--scheduler", args->scheduler,
                  "learning-rate schedule: none, cosine (anneal to 0 over the run, per epoch), cosine-per-step (the "
                  "same, per step) or step (x0.1 after each third); default: none for mlp, cosine-per-step for cnn")
      ->check(one_of({"none", "cosine", "cosine-per-step", "step"}));
  cmd->add_option("--seed", args->seed, "seed of the initial weights and of the shuffling")
      ->capture_default_str()
      ->transform(unsigned_integer());
  cmd->add_option("--workers", args->workers, "data loader threads")
      ->capture_default_str()
      ->transform(integer_in(0, kMaxWorkers));
  cmd->add_option("--save", args->save, "write the trained weights here (safetensors)")->check(writable_file());
  cmd->add_option("--amp", args->amp, "mixed precision: none, bf16 (autocast) or fp16 (autocast and GradScaler)")
      ->capture_default_str()
      ->check(one_of({"none", "bf16", "fp16"}));
  cmd->add_option("--nproc", args->nproc,
                  "processes training together with DistributedDataParallel (as under `locus run "
                  "--nproc-per-node N`); --batch-size stays the global batch")
      ->capture_default_str()
      ->transform(integer_in(1, 1024));
  cmd->add_option("--shard", args->shard,
                  "with several processes: none (DistributedDataParallel), full (parameters, gradients and optimizer "
                  "state sharded: FSDP, ZeRO-3), grad (gradients and optimizer state: ZeRO-2) or optim (optimizer "
                  "state: ZeRO-1)")
      ->capture_default_str()
      ->check(one_of({"none", "full", "grad", "optim"}));
  cmd->callback([args] { run_train(*args); });
}

}  // namespace locus::cli
