// Distributed benchmarks over Gloo or MPI, beside bench/torch_dist_bench.py (torch.distributed,
// gloo) with the same names, run by bench/dist_bench.sh: each a rank of `locus run
// --nproc-per-node 2` (gloo, the default) or of `locus run --backend mpi --nproc-per-node 2`
// with --backend mpi (the same rows over Locus's mpi groups).
//   dist_all_reduce_<size>   GB/s: bytes of the tensor / time of one all_reduce (sum, float32)
//   dist_mlp_step_single_b64 ms:   one SGD step of the MLP 784-256-10, batch 64, no group
//   dist_mlp_step_ddp_b64    ms:   the same step under DistributedDataParallel, batch 64 per rank
//   dist_mlp_ddp_overhead_b64 ms:  the difference, what data parallelism costs per step
// Both ranks run the same repeat counts (a collective cannot calibrate per rank), fixed by size;
// rank 0 times and writes the JSON.
//   locus run --nproc-per-node 2 locus_dist_bench --json out.json
//   locus run --backend mpi --nproc-per-node 2 locus_dist_bench --backend mpi --json out.json

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_harness.h"
#include "locus/locus.h"
#include "tools/locus/mlp.h"

using namespace locus;

namespace {

constexpr int kSamples = 9;

double seconds(const std::function<void()>& body) {
  const auto t0 = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// kSamples timings of `reps` calls of `body`, each sample starting together on every rank.
std::vector<double> samples(long reps, const std::function<void()>& body) {
  body();  // warm-up: connections, buffers, caches
  std::vector<double> per_call;
  for (int s = 0; s < kSamples; ++s) {
    distributed::barrier();
    per_call.push_back(seconds([&] {
                         for (long i = 0; i < reps; ++i) body();
                       }) /
                       static_cast<double>(reps));
  }
  return per_call;
}

std::string size_name(int64_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "M" : std::to_string(bytes >> 10) + "K";
}

void all_reduce_rows(bench::Harness& h) {
  for (int64_t bytes : {int64_t{1} << 10, int64_t{16} << 10, int64_t{256} << 10, int64_t{4} << 20, int64_t{64} << 20}) {
    Tensor t = ones({bytes / 4});
    const long reps = std::clamp<long>(static_cast<long>((int64_t{256} << 20) / bytes), 3, 500);
    std::vector<double> s = samples(reps, [&] { distributed::all_reduce(t); });  // dist.all_reduce(t)
    for (double& v : s) v = static_cast<double>(bytes) / v / 1e9;
    h.record("dist_all_reduce_" + size_name(bytes), "GB/s", s, "2 ranks, float32 sum, tensor bytes / time");
  }
}

void mlp_rows(bench::Harness& h, std::shared_ptr<distributed::ProcessGroup> g) {
  manual_seed(0);
  const Tensor x = randn({64, 784}), y = randint(0, 10, {64});
  auto single = cli::make_mlp();
  optim::SGD single_opt(single->parameters(), 0.01);
  const auto single_step = [&] {
    single_opt.zero_grad();
    nn::functional::cross_entropy(single(x), y).backward();
    single_opt.step();
  };
  // Every rank times the plain step (no communication), so both stay busy alike.
  std::vector<double> alone = samples(100, single_step);
  auto model = cli::make_mlp();
  nn::DistributedDataParallel ddp(model, g);
  optim::SGD opt(model->parameters(), 0.01);
  std::vector<double> together = samples(100, [&] {
    opt.zero_grad();
    nn::functional::cross_entropy(ddp(x), y).backward();
    opt.step();
  });
  for (double& v : alone) v *= 1e3;
  for (double& v : together) v *= 1e3;
  std::vector<double> overhead;
  for (size_t i = 0; i < alone.size(); ++i) overhead.push_back(together[i] - alone[i]);
  h.record("dist_mlp_step_single_b64", "ms", alone, "one process's SGD step, no group");
  h.record("dist_mlp_step_ddp_b64", "ms", together, "2 ranks, DDP, batch 64 each");
  h.record("dist_mlp_ddp_overhead_b64", "ms", overhead, "DDP step minus the plain step, sample by sample");
}

// --backend gloo|mpi (default gloo): the engine of both groups.
std::string backend_option(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--backend") return argv[i + 1];
  return "gloo";
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opts(argc, argv, {"all_reduce", "ddp"});
  const std::string backend = backend_option(argc, argv);
  distributed::init_process_group(backend);
  auto& g = distributed::default_group();
  std::shared_ptr<distributed::ProcessGroup> group = distributed::new_group(backend, distributed::GroupOptions().name("ddp"));
  bench::Harness h;
  if (opts.wants("all_reduce")) all_reduce_rows(h);
  if (opts.wants("ddp")) mlp_rows(h, group);
  if (g.rank() == 0 && !opts.json.empty())
    h.write_json(opts.json, "locus", "{\"ranks\": " + std::to_string(g.size()) + ", \"backend\": \"" + backend + "\"}");
  distributed::destroy_process_group();
  return 0;
}
