// `locus bench`: the tutorials' exercise. Forward pass and training step of the MLP (or, with
// --model cnn, the CNN of `locus train --model cnn`) for a few batch sizes on every available
// device, with the speedup over the CPU.
//
// Note [Bench rounds]
// A figure is the median of several samples, and each sample of a figure is taken next to the
// same sample of every other device: round r times every (batch, kind) on each device in turn,
// with the device order rotated each round. So a slow spell of the machine (another process on a
// shared core, a clock change) lands on every device alike instead of on one device's figure, and
// the spread (min-max over the rounds) shows how much to trust it. A speedup whose ranges
// overlap the CPU's is printed as "~1.0x (within noise)": the samples cannot tell the two apart.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tools/locus/bench_stats.h"
#include "tools/locus/cnn.h"
#include "tools/locus/commands.h"
#include "tools/locus/mlp.h"
#include "tools/locus/option_checks.h"

namespace locus::cli {
namespace {

struct BenchArgs {
  std::string model = "mlp";
  std::vector<int64_t> batch_sizes;  // default: 64, 512, 4096 (mlp); 64, 256 (cnn)
  std::string json;
  double seconds = 0.3;
  int rounds = 7;
};

// One timed thing: the forward pass or the training step of one device's model at one batch size.
struct Figure {
  Device device;
  std::function<void()> body;
  long calls = 1;  // per sample, from calibrate()
  std::vector<double> ms;  // per call, one entry per round
};

// One device's model, optimizer and batches (kept alive across the rounds).
struct DeviceSetup {
  Device device;
  nn::Sequential model;  // a handle: copies share the module
  std::unique_ptr<optim::SGD> opt;
  std::vector<Tensor> x, y;  // per batch size
};

struct Row {
  std::string device;
  int64_t batch;
  Spread forward, step;
};

// Seconds for `n` calls of the figure's body, device work included.
double run_calls(const Figure& f, long n) {
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) f.body();
  synchronize(f.device);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Calls per sample so that one sample lasts about `target` seconds (at least one call).
long calibrate(const Figure& f, double target) {
  run_calls(f, 1);  // warm-up: allocations, caches, lazy initialisation
  long n = 1;
  for (;;) {
    const double dt = std::max(run_calls(f, n), 1e-7);
    const long want = std::max(1L, static_cast<long>(std::llround(static_cast<double>(n) * target / dt)));
    if (dt >= target / 2 || n >= (1L << 22)) return std::min(want, 1L << 22);
    n = std::min(std::max(n * 2, want / 2), 1L << 22);
  }
}

std::vector<Device> available_devices() {
  std::vector<Device> out{Device("cpu")};
  for (int i = 0; i < cuda::device_count(); ++i) out.emplace_back(DeviceType::CUDA, i);
  if (sim::device_count() > 0) out.emplace_back("sim:0");
  return out;
}

// The table as JSON: the *_ms keys are medians, as before rounds existed; the speedup is the
// training step's over the CPU's at the same batch size.
// A failed write is an IOError (`locus` exits with 1), never a silent success without the file.
void write_json(const std::string& path, const std::string& model, const std::vector<Row>& rows, size_t nb, int rounds) {
  auto fail = [&path] {
    throw IOError("cannot write the JSON to '" + path + "': " + (errno ? std::strerror(errno) : "write failed"));
  };
  errno = 0;
  std::ofstream os(path);
  if (!os) fail();
  os << "{\"model\": \"" << model << "\", \"rounds\": " << rounds << ", \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Speedup s = speedup_of(rows[i % nb].step, r.step);
    os << (i ? ", " : "") << "{\"device\": \"" << r.device << "\", \"batch\": " << r.batch
       << ", \"rounds\": " << r.step.rounds << ", \"forward_ms\": " << r.forward.median
       << ", \"forward_ms_min\": " << r.forward.min << ", \"forward_ms_max\": " << r.forward.max
       << ", \"train_step_ms\": " << r.step.median << ", \"train_step_ms_min\": " << r.step.min
       << ", \"train_step_ms_max\": " << r.step.max << ", \"speedup_vs_cpu\": " << s.median
       << ", \"speedup_vs_cpu_min\": " << s.low << ", \"speedup_vs_cpu_max\": " << s.high
       << ", \"within_noise\": " << (s.within_noise ? "true" : "false") << "}";
  }
  os << "]}\n";
  os.close();  // flushes: a full disk shows here
  if (!os) fail();
}

void run_bench(BenchArgs a) {
  const bool cnn = a.model == "cnn";
  if (a.batch_sizes.empty()) a.batch_sizes = cnn ? std::vector<int64_t>{64, 256} : std::vector<int64_t>{64, 512, 4096};
  const std::vector<Device> devices = available_devices();
  const size_t nd = devices.size(), nb = a.batch_sizes.size();
  std::vector<DeviceSetup> setups;
  for (const Device& device : devices) {
    manual_seed(0);
    DeviceSetup s{device, cnn ? make_cnn() : make_mlp(), nullptr, {}, {}};
    s.model->to(device);
    s.opt = std::make_unique<optim::SGD>(s.model->parameters(), optim::SGDOptions{0.01});
    for (int64_t b : a.batch_sizes) {
      s.x.push_back((cnn ? randn({b, 1, 28, 28}) : randn({b, 784})).to(device));
      s.y.push_back(randint(0, 10, {b}).to(device));
    }
    setups.push_back(std::move(s));
  }
  // figures[(b * 2 + kind) * nd + d]: kind 0 forward, 1 training step.
  std::vector<Figure> figures;
  for (size_t b = 0; b < nb; ++b)
    for (int kind = 0; kind < 2; ++kind)
      for (DeviceSetup& s : setups) {
        const Tensor& x = s.x[b];
        const Tensor& y = s.y[b];
        const nn::Sequential model = s.model;
        optim::SGD& opt = *s.opt;
        // Inference in eval mode (BatchNorm's running statistics, no dropout), the step in train mode.
        auto forward = [model, &x] {
          model->eval();
          NoGradGuard no_grad;
          model(x);
        };
        auto step = [model, &opt, &x, &y] {
          model->train();
          opt.zero_grad();
          nn::functional::cross_entropy(model(x), y).backward();
          opt.step();
        };
        figures.push_back({s.device, kind == 0 ? std::function<void()>(forward) : std::function<void()>(step)});
      }
  const double sample_seconds = a.seconds / a.rounds;
  for (Figure& f : figures) f.calls = calibrate(f, sample_seconds);
  for (int r = 0; r < a.rounds; ++r)  // Note [Bench rounds]
    for (size_t group = 0; group < figures.size() / nd; ++group)
      for (size_t k = 0; k < nd; ++k) {
        Figure& f = figures[group * nd + (k + static_cast<size_t>(r)) % nd];
        f.ms.push_back(run_calls(f, f.calls) * 1e3 / static_cast<double>(f.calls));
      }
  std::vector<Row> rows;  // rows[d * nb + b]; the cpu's are the first nb
  for (size_t d = 0; d < nd; ++d)
    for (size_t b = 0; b < nb; ++b)
      rows.push_back({devices[d].str(), a.batch_sizes[b], spread_of(figures[(b * 2) * nd + d].ms),
                      spread_of(figures[(b * 2 + 1) * nd + d].ms)});
  std::printf("median (min-max) ms of %d rounds, interleaved across devices; the speedup is the training step's\n",
              a.rounds);
  std::printf("%-8s %6s %24s %24s %12s  %s\n", "device", "batch", "forward ms", "step ms", "samples/s", "vs cpu");
  for (const Row& r : rows) {
    const Row& cpu = rows[static_cast<size_t>(&r - rows.data()) % nb];
    const std::string vs = r.device == "cpu" ? "1.00x" : format_speedup(speedup_of(cpu.step, r.step));
    std::printf("%-8s %6lld %24s %24s %12.0f  %s\n", r.device.c_str(), static_cast<long long>(r.batch),
                format_spread(r.forward).c_str(), format_spread(r.step).c_str(),
                static_cast<double>(r.batch) / (r.step.median / 1e3), vs.c_str());
  }
  if (!a.json.empty()) write_json(a.json, cnn ? "cnn_fashion_mnist" : "mlp_784_256_10", rows, nb, a.rounds);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Time the MLP's (or the CNN's) forward pass and training step on every device");
  // Every option is checked before anything runs (Note [Option checks]).
  cmd->add_option("--model", args->model, "mlp (784-256-10) or cnn (the model of `locus train --model cnn`)")
      ->capture_default_str()
      ->check(one_of({"mlp", "cnn"}));
  cmd->add_option("--batch-sizes", args->batch_sizes, "batch sizes to time (default: 64 512 4096 for mlp, 64 256 for cnn)")
      ->transform(integer_in(1, 1000000));
  cmd->add_option("--seconds", args->seconds, "measuring time per figure, over all rounds")
      ->check(number_in(0.001, 3600.0))
      ->capture_default_str();
  cmd->add_option("--rounds", args->rounds, "samples per figure, interleaved across devices (median and range)")
      ->transform(integer_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--json", args->json, "also write the table as JSON here")->check(writable_file());
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace locus::cli
