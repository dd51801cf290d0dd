// `locus bench`: the tutorials' exercise. Forward pass and training step of the MLP for a few
// batch sizes on every available device, with the speedup over the CPU.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "locus/locus.h"
#include "tools/locus/commands.h"
#include "tools/locus/mlp.h"

namespace locus::cli {
namespace {

struct BenchArgs {
  std::vector<int64_t> batch_sizes{64, 512, 4096};
  std::string json;
  double seconds = 0.3;
};

struct Row {
  std::string device;
  int64_t batch;
  double forward_ms, step_ms;
};

// Median milliseconds per call of `body` over samples of at least `target` seconds each;
// `sync` makes device work finish inside the measured time.
template <class F>
double time_ms(F body, Device device, double target) {
  auto sync = [&] { synchronize(device); };
  body();
  sync();
  long n = 1;
  std::vector<double> samples;
  for (int s = 0; s < 7; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < n; ++i) body();
    sync();
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (samples.empty() && dt < target / 7 && n < (1L << 20)) {  // calibrating
      n = std::max(n * 2, static_cast<long>(n * (target / 7) / std::max(dt, 1e-6)));
      --s;
      continue;
    }
    samples.push_back(dt * 1e3 / static_cast<double>(n));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

std::vector<Device> available_devices() {
  std::vector<Device> out{Device("cpu")};
  for (int i = 0; i < cuda::device_count(); ++i) out.emplace_back(DeviceType::CUDA, i);
  if (sim::device_count() > 0) out.emplace_back("sim:0");
  return out;
}

void run_bench(const BenchArgs& a) {
  std::vector<Row> rows;
  for (const Device& device : available_devices()) {
    manual_seed(0);
    auto model = make_mlp();
    model->to(device);
    optim::SGD opt(model->parameters(), {0.01});
    for (int64_t b : a.batch_sizes) {
      const Tensor x = randn({b, 784}).to(device);
      const Tensor y = randint(0, 10, {b}).to(device);
      const double fwd = time_ms([&] {
        NoGradGuard no_grad;
        (*model)(x);
      }, device, a.seconds);
      const double step = time_ms([&] {
        opt.zero_grad();
        nn::cross_entropy((*model)(x), y).backward();
        opt.step();
      }, device, a.seconds);
      rows.push_back({device.str(), b, fwd, step});
    }
  }
  std::printf("%-8s %6s %12s %12s %14s %9s\n", "device", "batch", "forward ms", "step ms", "samples/s", "vs cpu");
  for (const Row& r : rows) {
    double cpu_step = r.step_ms;
    for (const Row& c : rows)
      if (c.device == "cpu" && c.batch == r.batch) cpu_step = c.step_ms;
    std::printf("%-8s %6lld %12.3f %12.3f %14.0f %8.2fx\n", r.device.c_str(), static_cast<long long>(r.batch), r.forward_ms,
                r.step_ms, static_cast<double>(r.batch) / (r.step_ms / 1e3), cpu_step / r.step_ms);
  }
  if (!a.json.empty()) {
    std::ofstream os(a.json);
    os << "{\"model\": \"mlp_784_256_10\", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      os << (i ? ", " : "") << "{\"device\": \"" << r.device << "\", \"batch\": " << r.batch
         << ", \"forward_ms\": " << r.forward_ms << ", \"train_step_ms\": " << r.step_ms << "}";
    }
    os << "]}\n";
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Time the MLP's forward pass and training step on every device");
  cmd->add_option("--batch-sizes", args->batch_sizes, "batch sizes to time")->capture_default_str();
  cmd->add_option("--seconds", args->seconds, "measuring time per figure")->capture_default_str();
  cmd->add_option("--json", args->json, "also write the table as JSON here");
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace locus::cli
