// LibTorch's side of locus_cpu_bench's `everyday` rows: the same bodies, sizes, names and
// harness (bench/bench_harness.h), so compare.py sets the two beside each other. ../shared/bench
// has no such rows. Built by bench/everyday_bench.sh against Debian's libtorch-dev.
//   libtorch_everyday_bench --json out.json

#include <torch/torch.h>

#include <string>

#include "bench/bench_harness.h"

using bench::gbps;
using bench::gflops;
using bench::ms;
using bench::us;
namespace {

bench::Harness g_bench;
template <class... A>
void run(A&&... args) { g_bench.run(std::forward<A>(args)...); }

void everyday() {
  torch::manual_seed(0);
  const auto v1m = torch::randn({int64_t{1} << 20});
  const auto rows = torch::randn({256, 4096});
  run("sort_1M", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::sort(v1m); } }, "ms", ms, 11, 0.05,
      "sort(x) of 2^20 floats");
  run("sort_rows_256x4096", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::sort(rows, 1); } }, "ms", ms, 11,
      0.05, "sort(x, 1): 256 rows of 4096");
  run("argsort_rows_256x4096", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::argsort(rows, 1, true); } },
      "ms", ms, 11, 0.05, "argsort(x, 1, descending)");
  run("topk_1M_k100", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::topk(v1m, 100); } }, "ms", ms, 11, 0.05,
      "topk(x, 100) of 2^20 floats");
  run("topk_rows_256x4096_k10", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::topk(rows, 10, 1); } }, "ms",
      ms, 11, 0.05, "topk(x, 10, 1)");
  const auto v16m = torch::rand({int64_t{1} << 24});
  run("cumsum_16M", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::cumsum(v16m, 0); } }, "GB/s",
      gbps(8.0 * (1 << 24)), 11, 0.05, "cumsum(x, 0); 8 B/elt");
  const auto wide = torch::rand({1024, 4096});
  run("cumsum_rows_1024x4096", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::cumsum(wide, 1); } }, "GB/s",
      gbps(8.0 * 1024 * 4096), 11, 0.05, "cumsum(x, 1); 8 B/elt");
  run("cumsum_cols_1024x4096", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::cumsum(wide, 0); } }, "GB/s",
      gbps(8.0 * 1024 * 4096), 11, 0.05, "cumsum(x, 0); 8 B/elt");
  const auto src = torch::randn({65536, 64});
  const auto node = torch::randint(0, 4096, {65536});
  const auto index = node.unsqueeze(1).expand({65536, 64}).contiguous();
  auto nodes = torch::zeros({4096, 64});
  run("scatter_add_65536x64", [&](long k) { for (long i = 0; i < k; ++i) nodes.scatter_add_(0, index, src); }, "ms", ms, 11,
      0.05, "out.scatter_add_(0, index, src) into 4096x64");
  run("index_add_65536x64", [&](long k) { for (long i = 0; i < k; ++i) nodes.index_add_(0, node, src); }, "ms", ms, 11,
      0.05, "out.index_add_(0, index, src) into 4096x64");
  const auto perm = torch::randperm(int64_t{1} << 20);
  run("scatter_1M", [&](long k) { for (long i = 0; i < k; ++i) { auto r = v1m.scatter(0, perm, v1m); } }, "ms", ms, 11,
      0.05, "x.scatter(0, perm, x) of 2^20 floats");
  const auto q = torch::randn({64, 128, 64}), kt = torch::randn({64, 64, 128});
  run("bmm_64x128x64x128", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::bmm(q, kt); } }, "GFLOP/s",
      gflops(2.0 * 64 * 128 * 64 * 128), 11, 0.05, "bmm [64,128,64] x [64,64,128]");
  const auto q4 = torch::randn({8, 8, 128, 64}), k4 = torch::randn({8, 8, 128, 64});
  run("einsum_bhqd_bhkd", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::einsum("bhqd,bhkd->bhqk", {q4, k4}); } },
      "GFLOP/s", gflops(2.0 * 64 * 128 * 64 * 128), 11, 0.05, "einsum(\"bhqd,bhkd->bhqk\") 8x8x128x64");
  const auto xb = torch::randn({512, 784}), w = torch::randn({256, 784});
  run("einsum_bi_oi", [&](long k) { for (long i = 0; i < k; ++i) { auto r = torch::einsum("bi,oi->bo", {xb, w}); } },
      "GFLOP/s", gflops(2.0 * 512 * 784 * 256), 11, 0.05, "einsum(\"bi,oi->bo\"): a Linear layer");
  for (const int groups : {1, 2}) {
    torch::nn::Sequential model(torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 10));
    std::vector<torch::Tensor> weights, biases, all = model->parameters();
    for (const auto& item : model->named_parameters()) {
      const std::string& name = item.key();
      (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0 ? biases : weights).push_back(item.value());
    }
    for (auto& p : all) p.mutable_grad() = torch::randn(p.sizes());
    std::vector<torch::optim::OptimizerParamGroup> param_groups;
    if (groups == 1) {
      param_groups.emplace_back(all);
    } else {
      param_groups.emplace_back(weights);
      param_groups.emplace_back(biases,
                                std::make_unique<torch::optim::AdamOptions>(torch::optim::AdamOptions(1e-3).weight_decay(0)));
    }
    torch::optim::Adam adam(std::move(param_groups), torch::optim::AdamOptions(1e-3).weight_decay(1e-4));
    run("optim_adam_step_mlp_" + std::to_string(groups) + "group" + (groups > 1 ? "s" : ""),
        [&](long k) { for (long i = 0; i < k; ++i) adam.step(); }, "us", us, 15, 0.05,
        "Adam.step() over 784-256-10's parameters");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opt(argc, argv, {"everyday"});
  if (opt.wants("everyday")) everyday();
  if (!opt.json.empty()) g_bench.write_json(opt.json, "libtorch", "{\"torch\": \"" TORCH_VERSION "\"}");
}
